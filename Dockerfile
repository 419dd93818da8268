# Tenure server image: one node per container, configured by TENURE_* environment variables (see
# docs/configuration.md), data in /data, HTTP on 7001 and Raft on 7100 inside the container.
#   docker build -t tenure:local .                                  (with a registry)
#   docker build --build-arg BASE_IMAGE=tenure-base:local --network host -t tenure:local .
#                                   (no registry: scripts/container-engine.sh builds that base)
# The image carries the server's compiled code and production dependencies only.
ARG BASE_IMAGE=node:20-slim

FROM ${BASE_IMAGE} AS build
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
RUN npm ci --no-audit --no-fund --ignore-scripts=false
COPY tsconfig.base.json ./
COPY packages/raft packages/raft
COPY packages/coord-state packages/coord-state
COPY packages/server packages/server
# coord-state's project references the test kit (its tests use it), so tsc needs its sources.
COPY tools/testkit tools/testkit
RUN npx tsc -b packages/server \
 && npm prune --omit=dev --no-audit --no-fund \
 && mkdir -p /out/packages \
 && for p in raft coord-state server; do \
      mkdir -p /out/packages/$p && cp -r packages/$p/package.json packages/$p/dist /out/packages/$p/; \
      if [ -d packages/$p/node_modules ]; then cp -r packages/$p/node_modules /out/packages/$p/; fi; \
    done \
 && cp -r node_modules package.json /out/ \
 && find /out/node_modules/@tenure -maxdepth 1 -type l \
      ! -name raft ! -name coord-state ! -name server -delete

FROM ${BASE_IMAGE}
ENV NODE_ENV=production \
    TENURE_DATA_DIR=/data \
    TENURE_HTTP=0.0.0.0:7001 \
    TENURE_RAFT=0.0.0.0:7100
WORKDIR /app
COPY --from=build /out/ ./
RUN mkdir -p /data && chown node:node /data
USER node
VOLUME ["/data"]
EXPOSE 7001 7100
# /readyz: knows a leader and has applied what it last heard was committed.
HEALTHCHECK --interval=5s --timeout=10s --start-period=10s --retries=3 \
  CMD ["node", "-e", "const p=(process.env.TENURE_HTTP||'0.0.0.0:7001').split(':').pop();fetch('http://127.0.0.1:'+p+'/readyz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
ENTRYPOINT ["node", "packages/server/dist/main.js"]
