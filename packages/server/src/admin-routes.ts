/**
 * Admin routes are marked here, in one place (docs/api.md): a route whose options carry
 * `config: ADMIN_ROUTE` needs the `admin` role once authentication is on (docs/operations.md).
 * Until then the marker changes nothing; an auth hook reads `request.routeOptions.config.admin`.
 */

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The route needs the `admin` role (see admin-routes.ts). */
    admin?: boolean;
  }
}

/** Route `config` of an admin route. */
export const ADMIN_ROUTE = { admin: true } as const;
