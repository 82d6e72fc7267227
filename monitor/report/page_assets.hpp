// The report page's style sheet and script, inlined into every page (nothing is fetched). The
// script reads the charts' data from the page's <script type="application/json" id="report-data">,
// shows the values under the pointer, and marks the page body with data-ready="CHARTS" once it
// has wired every chart, or data-error="MESSAGE" when something failed: what the browser test reads.
#pragma once

namespace ddp::monitor {

extern const char* const kPageStyle;
extern const char* const kPageScript;

}  // namespace ddp::monitor
