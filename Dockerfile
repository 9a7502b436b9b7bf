# syntax=docker/dockerfile:1
# The nsxv-operator image: `docker build -t nsxv-operator .`
# Three stages: `build` compiles TypeScript with the dev dependencies; `deps` installs only the
# production dependencies; `runtime` gets the compiled output, the CRDs and those dependencies,
# and nothing that can install or build: no npm, no compiler, no sources, no tests.
# Pin the base images by digest for reproducible builds: --build-arg NODE_IMAGE=node:24@sha256:...

ARG NODE_IMAGE=node:24
ARG NODE_SLIM_IMAGE=node:24-slim

FROM ${NODE_IMAGE} AS build
WORKDIR /src
COPY package.json package-lock.json ./
# --ignore-scripts: no dependency runs code at install time; none needs to
RUN --mount=type=cache,target=/root/.npm npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY scripts/ scripts/
COPY src/ src/
RUN npm run build

FROM ${NODE_SLIM_IMAGE} AS deps
WORKDIR /src
COPY package.json package-lock.json ./
RUN --mount=type=cache,target=/root/.npm npm ci --omit=dev --ignore-scripts --no-audit --no-fund

FROM ${NODE_SLIM_IMAGE} AS runtime
ARG VERSION=0.1.0
ARG REVISION=unknown
ARG CREATED=unknown
LABEL org.opencontainers.image.title="nsxv-operator" \
      org.opencontainers.image.description="Kubernetes operator that keeps VMware NSX-v managers in the state declared in git: edge tenants and IP pool allocations." \
      org.opencontainers.image.licenses="Apache-2.0" \
      org.opencontainers.image.source="https://github.com/nsxv-operator/nsxv-operator" \
      org.opencontainers.image.documentation="https://github.com/nsxv-operator/nsxv-operator/blob/main/deploy/README.md" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.revision="${REVISION}" \
      org.opencontainers.image.created="${CREATED}"
# The package managers stay behind: the runtime installs nothing. The user matches the
# Deployment's runAsUser (65532, distroless' "nonroot").
RUN rm -rf /usr/local/lib/node_modules/npm /usr/local/lib/node_modules/corepack \
        /usr/local/bin/npm /usr/local/bin/npx /usr/local/bin/corepack \
        /opt/yarn-* /usr/local/bin/yarn /usr/local/bin/yarnpkg \
    && groupadd --gid 65532 nonroot \
    && useradd --uid 65532 --gid 65532 --no-create-home --home-dir /nonexistent \
        --shell /usr/sbin/nologin nonroot
ENV NODE_ENV=production \
    NODE_OPTIONS=--enable-source-maps
WORKDIR /app
# package.json stays: its "type": "module" makes Node load dist/ as ES modules.
# Files are owned by root and read-only to the operator's user.
COPY package.json ./
COPY --from=deps /src/node_modules/ node_modules/
COPY --from=build /src/dist/ dist/
COPY crds/ crds/
# the demo (`docker run IMAGE demo`) runs the embedded simulator on these
COPY examples/demo/ examples/demo/
USER 65532:65532
EXPOSE 8080 8081
ENTRYPOINT ["node", "dist/cli/main.js"]
CMD ["run"]
