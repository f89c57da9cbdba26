package web

import "embed"

// staticFiles is the dashboard: plain HTML, CSS and JavaScript, no build
// step; the service worker makes it an installable PWA that shows the
// last data it saw when the server cannot be reached.
//
//go:embed static
var staticFiles embed.FS
