// The timeline page's fixed parts (timeline_page_assets.cpp): its style, the script that
// counts the page's own errors, the skeleton its script fills, and that script.
#pragma once

namespace viaduct::timeline::detail {

// Runs first (in <head>): records every script error and console.error call, shows them, and
// keeps their count on <body data-errors> for a headless browser to read.
extern const char *const kPageErrorHook;
extern const char *const kPageStyle;
// From the opening of the page's grid to just before its <aside> (needles and report).
extern const char *const kPageBody;
// Draws the lanes, the axis and the replay from the JSON in #timeline-data, then sets
// <body data-ready="1">.
extern const char *const kPageScript;

}  // namespace viaduct::timeline::detail
