// Text that users wrote, made safe for whoever reads it: a terminal (an admin running ddp-report
// on another user's files), slurmd's log, a job's output. Another user's bytes must not move the
// cursor, clear the screen, retitle the window or hide a line, so control characters are written
// as escapes; the rest of well-formed UTF-8 (node names, exception texts) stays as it is.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace ddp::plan {

// The bytes of the well-formed UTF-8 sequence at text[i] (no overlong forms, surrogates or code
// points above U+10FFFF), 1 for ASCII, 0 where none starts.
std::size_t utf8_sequence_length(std::string_view text, std::size_t i);
bool valid_utf8(std::string_view text);

// `text` with C0 and C1 controls (a tab and a line break too), DEL, the bidirectional overrides
// and isolates, the line and paragraph separators, and bytes that are not UTF-8 written as \xNN
// (a byte) or \u{NNNN} (a code point); at most `max_bytes` of the input shown, then "...".
std::string printable(std::string_view text, std::size_t max_bytes = std::string_view::npos);

}  // namespace ddp::plan
