#!/bin/bash
# Renders a ddp-report page in headless Chromium (Debian's `chromium`) and checks that it
# rendered: the page's script ran without an error and wired every chart (it sets data-ready on
# the body, data-error on a failure), the browser logged no script error, every expected series
# is in the rendered page, and the screenshot is a picture with the expected colours in it.
#   page_in_browser.sh PAGE.html SCREENSHOT.png [--colour RRGGBB]... [SERIES]...
# SERIES are data-series labels ("n1 GPU 0", "nodes median"); --colour a colour that must be
# drawn (d62728: an idle GPU). Exits 77 when Chromium is not installed.
set -euo pipefail
page=$(realpath "$1") shot=$2
shift 2
colours=() series=()
while (($#)); do
  if [ "$1" = --colour ]; then colours+=("$2"); shift 2; else series+=("$1"); shift; fi
done
browser=$(command -v chromium || command -v chromium-browser || true)
[ -n "$browser" ] || { echo "SKIP: chromium is not installed (scripts/setup.sh installs it)"; exit 77; }
fail() { echo "FAIL: $*" >&2; exit 1; }
work=$(mktemp -d /tmp/ddp-page.XXXXXX)
trap 'rm -rf "$work"' EXIT

# A profile of its own, no sandbox (tests run as root), no GPU: only the page is rendered.
run_browser() {
  timeout 120 "$browser" --headless --no-sandbox --disable-gpu --hide-scrollbars --no-first-run \
    --user-data-dir="$work/profile" --enable-logging=stderr --v=0 "$@" "file://$page"
}
run_browser --dump-dom >"$work/dom.html" 2>"$work/dom.log" || fail "chromium --dump-dom: $(tail -5 "$work/dom.log")"
# The page logs nothing: any message from it (an uncaught exception above all) is a failure.
if grep -E 'CONSOLE|Uncaught' "$work/dom.log" | grep -F "$page" >"$work/console.log"; then
  fail "the page logged in the browser: $(cat "$work/console.log")"
fi
figures=$(grep -o '<figure class="chart"' "$work/dom.html" | wc -l)
((figures > 0)) || fail "no chart in the rendered page"
grep -q "<body data-ready=\"$figures\">" "$work/dom.html" ||
  fail "the page's script did not wire its $figures charts: $(grep -o '<body[^>]*>' "$work/dom.html")"
for s in "${series[@]}"; do
  grep -qF "data-series=\"$s\"" "$work/dom.html" || fail "no series '$s' in the rendered page"
done

height=$((400 + 420 * figures))
run_browser --screenshot="$shot" --window-size=1200,"$height" >"$work/shot.log" 2>&1 ||
  fail "chromium --screenshot: $(tail -5 "$work/shot.log")"
# PNG decoded by hand (no imaging library needed): the picture is the window's size, mostly
# white paper with ink on it, and holds each expected colour.
python3 - "$shot" 1200 "$height" "${colours[@]}" <<'PY' || fail "the screenshot"
import struct, sys, zlib
path, width, height, want = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4:]
data = open(path, "rb").read()
assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
pos, idat = 8, b""
while pos < len(data):
    n, kind = struct.unpack(">I4s", data[pos:pos + 8])
    if kind == b"IHDR":
        w, h, depth, ctype = struct.unpack(">IIBB", data[pos + 8:pos + 18])
    if kind == b"IDAT":
        idat += data[pos + 8:pos + 8 + n]
    pos += 12 + n
assert (w, h) == (width, height), f"{w}x{h}, expected {width}x{height}"
assert depth == 8 and ctype in (2, 6), f"depth {depth}, colour type {ctype}"
bpp = 3 if ctype == 2 else 4
raw, stride = zlib.decompress(idat), w * bpp
rows, prev = [], bytearray(stride)
for y in range(h):
    f, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
    for i in range(stride):
        a = line[i - bpp] if i >= bpp else 0
        b, c = prev[i], prev[i - bpp] if i >= bpp else 0
        if f == 1: line[i] = (line[i] + a) & 255
        elif f == 2: line[i] = (line[i] + b) & 255
        elif f == 3: line[i] = (line[i] + (a + b) // 2) & 255
        elif f == 4:
            p = a + b - c
            pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
            line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
    rows.append(bytes(line))
    prev = line
seen, ink = set(), 0
for line in rows:
    for x in range(0, stride, bpp):
        px = line[x:x + 3]
        seen.add(px.hex())
        ink += px != b"\xff\xff\xff"
share = ink / (w * h)
assert 0.02 < share < 0.6, f"{share:.1%} of the picture is not white"
for colour in want:
    assert colour.lower() in seen, f"no pixel of #{colour} in the picture"
print(f"screenshot {w}x{h}: {share:.1%} ink, {len(seen)} colours, {', '.join('#' + c for c in want) or 'no colour asked'} drawn")
PY
echo "rendered: $figures charts wired by the page's script, no console message, ${#series[@]} series found"
