# cityfinder's container image, for those who build with Docker: the same
# image as `make image` writes without a daemon (docs/container.md).
#
#   make image                  # the static binary and bin/image-context
#   docker build --build-arg VERSION=$(git describe --tags --always) -t cityfinder .
#
# It pulls no base image: FROM scratch, with the files `make image` wrote
# from this checkout and the build machine (the binary, built with
# CGO_ENABLED=0; the CA certificates; /etc/passwd naming the user 65532).
# internal/image's TestDockerfile checks that this file agrees with the
# image tools/image builds.
FROM scratch

ARG VERSION=dev
ARG REVISION=
LABEL org.opencontainers.image.title="cityfinder" \
      org.opencontainers.image.description="City autocomplete: a rate-limited /search HTTP API" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.revision="${REVISION}" \
      org.opencontainers.image.source="https://github.com/cityfinder/cityfinder" \
      org.opencontainers.image.licenses="MIT"

COPY bin/image-context/root/ /
COPY --chown=65532:65532 bin/image-context/data/ /data/

ENV PATH=/usr/local/bin CITYFINDER_DATA_DIR=/data
USER 65532:65532
WORKDIR /data
VOLUME /data
EXPOSE 8080/tcp
STOPSIGNAL SIGTERM
HEALTHCHECK --interval=10s --timeout=3s --start-period=5s --retries=3 \
    CMD ["cityfinder", "healthcheck", "--addr", "127.0.0.1:8080"]
ENTRYPOINT ["cityfinder"]
CMD ["serve", "--addr", ":8080", "--data-dir", "/data"]
