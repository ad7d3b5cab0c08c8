# Container image of stac-mcp, built by goreleaser (.goreleaser.yaml, dockers_v2) from the binaries it
# has just cross-compiled: the build context holds linux/amd64/stac-mcp and linux/arm64/stac-mcp, and
# buildx picks one per platform. It is not meant for a plain `docker build` from the repository.
#
# distroless/static: no shell, no package manager, CA certificates and tzdata only; the binary is
# static (CGO_ENABLED=0). Runs as the image's unprivileged "nonroot" user.
#   stdio (an MCP host starts it):  docker run -i --rm ghcr.io/stacmcp/stac-mcp:VERSION
#   Streamable HTTP:                docker run --rm -p 8080:8080 -e STAC_MCP_HTTP_TOKEN=... \
#                                     ghcr.io/stacmcp/stac-mcp:VERSION http --addr 0.0.0.0:8080
FROM gcr.io/distroless/static-debian12:nonroot
ARG TARGETPLATFORM
LABEL io.modelcontextprotocol.server.name="io.github.stacmcp/stac-mcp"
COPY $TARGETPLATFORM/stac-mcp /usr/local/bin/stac-mcp
USER nonroot:nonroot
ENTRYPOINT ["/usr/local/bin/stac-mcp"]
CMD ["stdio"]
