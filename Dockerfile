# syntax=docker/dockerfile:1

# Build: install all dependencies, compile TypeScript to dist/ and bundle the dashboard into dist/dashboard, then
# drop dev dependencies.
FROM node:24.21.0-bookworm-slim AS build
# pkcs11js (the vault's PKCS#11 key provider) is a native addon that node-gyp compiles during `npm ci`: it needs
# Python, make and a C++ compiler, which the slim image lacks. They stay in this stage: the runtime stage below
# gets the compiled addon in node_modules, not the compilers.
RUN apt-get update \
    && apt-get install -y --no-install-recommends python3 make g++ \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci
COPY tsconfig.json tsconfig.build.json ./
COPY scripts ./scripts
COPY src ./src
COPY dashboard ./dashboard
COPY secure-fields ./secure-fields
RUN npm run build && npm prune --omit=dev

# Runtime: compiled code and production dependencies only (no compiler, no development packages such as the
# embedded database's PGlite: set DATABASE_URL), as the unprivileged `node` user.
FROM node:24.21.0-bookworm-slim
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=3000
WORKDIR /app
COPY --from=build /app/package.json ./package.json
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
# Writable by `node`, the user everything runs as: /app itself, so that `docker compose exec api node
# dist/cli/main.js api-key create --out FILE` can write a key file in the working directory; /app/data (the
# embedded database when there is no DATABASE_URL, development keys); the spool (forward records while
# PostgreSQL is away). The code and node_modules stay root-owned and read-only to the process.
RUN mkdir -p /app/data /var/lib/vault-forward/spool && chown node:node /app /app/data /var/lib/vault-forward/spool
USER node
# A larger young generation: the forward path allocates a lot of short-lived objects, and with
# the default the API spends about a quarter of its CPU in scavenges (docs/benchmarks.md).
ENV NODE_OPTIONS=--max-semi-space-size=64
EXPOSE 3000
CMD ["node", "dist/main.js"]
