# syntax=docker/dockerfile:1
# One image for the web process (API and dashboard, scripts/server.mjs), the job workers
# (scripts/worker.mjs) and the operator CLI (scripts/ops.mjs). compose.yaml runs it at scale:
# PostgreSQL, Redis and an S3-compatible store.

# Dependencies, with the test and build tools (Prisma generates its client in postinstall; node-gyp builds the
# engine's native kernel, native/kernels, with the compiler installed here).
FROM node:20-bookworm-slim AS deps
WORKDIR /app
ENV NEXT_TELEMETRY_DISABLED=1
RUN apt-get update && apt-get install -y --no-install-recommends python3 make g++ && rm -rf /var/lib/apt/lists/*
COPY package.json package-lock.json prisma.config.ts ./
COPY prisma ./prisma
COPY native ./native
COPY scripts/no-schema-engine.sh ./scripts/no-schema-engine.sh
RUN npm ci --no-audit --no-fund && test -f native/kernels/build/Release/kernels.node

# The production build: next build, then the engine's worker threads compiled beside it
# (.next/engine/worker.mjs, scripts/build-engine.mjs), then the worker, ops and db:migrate entries with
# their own engine (dist/, scripts/build-processes.mjs), so no process runs TypeScript. Then the dev and
# test packages (tsx, esbuild, vitest, Playwright, axe…) leave, and the entries' build is checked to
# match the sources as the image holds them: with no compiler left, a stale one could not be rebuilt.
FROM deps AS build
COPY . .
RUN npm run build && test -f .next/engine/worker.mjs \
    && npm prune --omit=dev --no-audit --no-fund \
    && node scripts/build-processes.mjs --check

# What runs: no compilers, no test packages, an unprivileged user, data in a volume (the native kernel comes built).
FROM node:20-bookworm-slim AS runtime
WORKDIR /app
ENV NODE_ENV=production \
    NEXT_TELEMETRY_DISABLED=1 \
    NEXT_MANUAL_SIG_HANDLE=true \
    HOST=0.0.0.0 \
    PORT=3000 \
    DATA_DIR=/data
RUN useradd --system --uid 10001 --home-dir /app rhinarium && mkdir -p /data && chown rhinarium /data
COPY --from=build --chown=rhinarium /app /app
USER rhinarium
VOLUME /data
EXPOSE 3000
HEALTHCHECK --interval=10s --timeout=3s --start-period=60s \
  CMD ["node", "-e", "fetch('http://127.0.0.1:3000/readyz').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
CMD ["node", "scripts/server.mjs"]
