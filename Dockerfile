# callscript in a container (docs/deploy.md). Two stages: `build` compiles the TypeScript
# with the dev dependencies; the final image holds dist/ and the production dependencies
# only, and runs as the unprivileged user `node`. (RUN --mount needs BuildKit: Docker 23 and later.)
#
#   docker build -t callscript .
#   docker run -p 3000:3000 -v "$PWD/flows:/app/flows:ro" callscript
#
# Flows are mounted at /app/flows (read-only is fine; changes are reloaded), a config file
# at /app/callscript.yaml (or CALLSCRIPT_CONFIG), secrets as environment variables.

FROM node:20-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
# --ignore-scripts: `prepare` would build before the sources are copied
RUN --mount=type=cache,target=/root/.npm npm ci --ignore-scripts --no-audit --no-fund
COPY . .
RUN npm run build

FROM node:20-slim
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=3000 \
    LOG_FORMAT=json
WORKDIR /app
COPY package.json package-lock.json ./
RUN --mount=type=cache,target=/root/.npm npm ci --omit=dev --ignore-scripts --no-audit --no-fund
COPY --from=build /app/dist ./dist
COPY bin ./bin
USER node
EXPOSE 3000
# liveness: answers 200 while the process serves, never touches the store (readiness is /health)
HEALTHCHECK --interval=15s --timeout=3s --start-period=30s --retries=3 \
  CMD node -e "fetch('http://127.0.0.1:'+(process.env.PORT||3000)+'/health/live').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"
# SIGTERM drains: requests in progress are answered, then the process exits 0
STOPSIGNAL SIGTERM
CMD ["node", "dist/cli/main.js", "serve"]
