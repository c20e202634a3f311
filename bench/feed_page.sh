#!/usr/bin/env bash
# The feed view of the web page in a real browser: starts `papers serve` on
# INDEX (one with tags and papers not yet marked) with the seen / read /
# save buttons (`--allow-write`; nothing is clicked), loads
# `/?feed` in headless Chromium and writes its screenshot:
#
#   bench/feed_page.sh INDEX     -> docs/feed.png
#
# The test `feed::the_server_serves_the_feed_and_follows_new_tags` checks
# the same page's DOM against `/api/feed`.
set -euo pipefail
cd "$(dirname "$0")/.."
index="${1:?usage: bench/feed_page.sh INDEX}"
browser=$(command -v chromium || command -v chromium-browser || command -v google-chrome) || {
  echo "bench/feed_page.sh: no Chromium on this machine" >&2
  exit 1
}
cargo build --release --quiet
papers="${CARGO_TARGET_DIR:-target}/release/papers"
log=$(mktemp)
"$papers" --index "$index" serve --allow-write --addr 127.0.0.1:0 2>"$log" &
server=$!
trap 'kill $server 2>/dev/null; rm -f "$log"' EXIT
until grep -q "on http://" "$log"; do sleep 0.2; done
base=$(grep -o 'http://[0-9.:]*' "$log" | head -1)
"$browser" --headless --no-sandbox --disable-gpu --hide-scrollbars \
  --window-size=1100,900 --virtual-time-budget=8000 --screenshot=docs/feed.png "$base/?feed" 2>/dev/null
echo "docs/feed.png ($base/?feed)"
