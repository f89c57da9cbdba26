package service

import (
	"encoding/xml"
	"path/filepath"
	"strings"
)

// renderLaunchd writes a LaunchAgent: started at login (RunAtLoad),
// started again when it exits with a failure (KeepAlive.SuccessfulExit
// false), so `horizon stop` still stops it.
func renderLaunchd(s Spec) string {
	var b strings.Builder
	w := func(lines ...string) {
		for _, l := range lines {
			b.WriteString(l)
			b.WriteByte('\n')
		}
	}
	str := func(indent, v string) { w(indent + "<string>" + esc(v) + "</string>") }
	key := func(indent, k string) { w(indent + "<key>" + esc(k) + "</key>") }

	w(`<?xml version="1.0" encoding="UTF-8"?>`,
		`<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">`,
		`<!-- horizon's daemon, written by "horizon service install"; run it again to change this file, "horizon service uninstall" to remove it. -->`,
		`<plist version="1.0">`,
		`<dict>`)
	key("\t", "Label")
	str("\t", Label(s.Name))
	key("\t", "ProgramArguments")
	w("\t<array>")
	for _, a := range append([]string{s.Binary}, s.Args...) {
		str("\t\t", a)
	}
	w("\t</array>")
	if len(s.Env) > 0 {
		key("\t", "EnvironmentVariables")
		w("\t<dict>")
		for _, v := range s.Env {
			key("\t\t", v.Name)
			str("\t\t", v.Value)
		}
		w("\t</dict>")
	}
	key("\t", "RunAtLoad")
	w("\t<true/>")
	key("\t", "KeepAlive")
	w("\t<dict>")
	key("\t\t", "SuccessfulExit")
	w("\t\t<false/>")
	w("\t</dict>")
	key("\t", "ThrottleInterval")
	w("\t<integer>10</integer>")
	key("\t", "ExitTimeOut")
	w("\t<integer>90</integer>")
	if s.LogDir != "" {
		key("\t", "StandardOutPath")
		str("\t", filepath.Join(s.LogDir, "launchd.out.log"))
		key("\t", "StandardErrorPath")
		str("\t", filepath.Join(s.LogDir, "launchd.err.log"))
	}
	w(`</dict>`, `</plist>`)
	return b.String()
}

func esc(s string) string {
	var b strings.Builder
	_ = xml.EscapeText(&b, []byte(s))
	return b.String()
}
