#!/usr/bin/env bash
# The web page in a real browser: starts `papers serve` on INDEX (default:
# an index of the shipped sample dumps in data/, built if missing), loads a
# search and a "similar" page in headless Chromium (Debian: `apt-get install
# chromium`), and writes their screenshots:
#
#   bench/browser.sh [INDEX]     -> docs/serve.png, docs/serve-similar.png
#
# The test `serve::the_page_searches_and_finds_similar_papers_in_a_real_browser`
# checks the same pages' DOM against the API.
set -euo pipefail
cd "$(dirname "$0")/.."
browser=$(command -v chromium || command -v chromium-browser || command -v google-chrome) || {
  echo "bench/browser.sh: no Chromium on this machine" >&2
  exit 1
}
cargo build --release --quiet
papers="${CARGO_TARGET_DIR:-target}/release/papers"
index="${1:-${CARGO_TARGET_DIR:-target}/browser-index}"
[ -f "$index/manifest.json" ] || "$papers" --index "$index" index data/
log=$(mktemp)
"$papers" --index "$index" serve --addr 127.0.0.1:0 2>"$log" &
server=$!
trap 'kill $server 2>/dev/null; rm -f "$log"' EXIT
until grep -q "on http://" "$log"; do sleep 0.2; done
base=$(grep -o 'http://[0-9.:]*' "$log" | head -1)
shot() {
  "$browser" --headless --no-sandbox --disable-gpu --hide-scrollbars \
    --window-size=1100,820 --virtual-time-budget=8000 --screenshot="$1" "$2" 2>/dev/null
}
shot docs/serve.png "$base/?q=position%20encoding%20for%20long%20contexts"
first=$(curl -s "$base/api/search?q=position%20encoding%20for%20long%20contexts&k=1" |
  grep -o '"id":"[0-9a-f]*"' | head -1 | cut -d'"' -f4)
shot docs/serve-similar.png "$base/?similar=$first"
echo "docs/serve.png, docs/serve-similar.png ($base, similar to $first)"
