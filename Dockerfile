# Tenure server image: one node per container, configured by TENURE_* environment variables
# (packages/server/src/config.ts), data in /data, HTTP on 7001 and Raft on 7100 inside the container.
# Build: docker build -t tenure .      Run three nodes: docker compose up -d

FROM node:20-slim AS build
WORKDIR /app
# Manifests first so `npm ci` is cached while only sources change.
COPY package.json package-lock.json ./
COPY packages/raft/package.json packages/raft/
COPY packages/coord-state/package.json packages/coord-state/
COPY packages/server/package.json packages/server/
COPY packages/client/package.json packages/client/
COPY test/package.json test/
COPY tools/testkit/package.json tools/testkit/
COPY tools/chaos/package.json tools/chaos/
RUN npm ci --no-audit --no-fund
COPY tsconfig.base.json tsconfig.json ./
COPY packages packages
RUN npx tsc -b packages/server \
 && npm prune --omit=dev --no-audit --no-fund

FROM node:20-slim
ENV NODE_ENV=production \
    TENURE_DATA_DIR=/data \
    TENURE_HTTP=0.0.0.0:7001 \
    TENURE_RAFT=0.0.0.0:7100
WORKDIR /app
COPY --from=build /app/package.json ./
COPY --from=build /app/node_modules node_modules
COPY --from=build /app/packages packages
RUN mkdir -p /data && chown node:node /data
USER node
VOLUME ["/data"]
EXPOSE 7001 7100
# /readyz: knows a leader and has applied what it last heard committed (SPEC §3).
HEALTHCHECK --interval=5s --timeout=3s --start-period=10s --retries=3 \
  CMD ["node", "-e", "const p=(process.env.TENURE_HTTP||'0.0.0.0:7001').split(':').pop();fetch('http://127.0.0.1:'+p+'/readyz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
ENTRYPOINT ["node", "packages/server/dist/main.js"]
