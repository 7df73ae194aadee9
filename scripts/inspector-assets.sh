#!/usr/bin/env bash
# Fetch the web inspector's one third-party asset, htmx, from the npm registry
# at a pinned version, check its sha256 and write it into daemon/inspector/static.
# With --check, compare instead of writing: fail if the committed file differs.
set -euo pipefail
version=2.0.11
sum=d6fdc75f204e6bdefa99b69bf1e6d4ac69b8a364f77929f45c13476b4000f717
dest=daemon/inspector/static
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
(cd "$tmp" && npm pack "htmx.org@$version" --silent >/dev/null && tar xzf "htmx.org-$version.tgz")
echo "$sum  $tmp/package/dist/htmx.min.js" | sha256sum --check --quiet
if [[ "${1:-}" == --check ]]; then
  cmp "$tmp/package/dist/htmx.min.js" "$dest/htmx.min.js"
  cmp "$tmp/package/LICENSE" "$dest/htmx.LICENSE"
  echo "inspector assets match htmx.org@$version"
else
  cp "$tmp/package/dist/htmx.min.js" "$dest/htmx.min.js"
  cp "$tmp/package/LICENSE" "$dest/htmx.LICENSE"
fi
