// Package procnet lists the TCP sockets a process listens on, from Linux's
// /proc: the security tests enumerate every listener of the daemon (and of
// its children) with it, so a new listener without a credential check
// fails them until it is guarded.
package procnet

import (
	"bufio"
	"encoding/hex"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// ErrUnsupported says this system has no /proc to read.
var ErrUnsupported = errors.New("procnet: no /proc/<pid>/net on this system")

// Listener is one listening TCP socket.
type Listener struct {
	PID  int
	Addr netip.AddrPort
}

// Listening returns the TCP sockets pid listens on.
func Listening(pid int) ([]Listener, error) {
	inodes, err := socketInodes(pid)
	if err != nil {
		return nil, err
	}
	var out []Listener
	for _, table := range []string{"tcp", "tcp6"} {
		rows, err := listenRows(filepath.Join("/proc", strconv.Itoa(pid), "net", table))
		if errors.Is(err, os.ErrNotExist) {
			if table == "tcp" {
				return nil, ErrUnsupported
			}
			continue
		}
		if err != nil {
			return nil, err
		}
		for _, r := range rows {
			if inodes[r.inode] {
				out = append(out, Listener{PID: pid, Addr: r.addr})
			}
		}
	}
	return out, nil
}

// Children returns the pids whose parent is pid.
func Children(pid int) ([]int, error) {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil, ErrUnsupported
	}
	var out []int
	for _, e := range ents {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue // gone meanwhile
		}
		// "pid (comm) state ppid ...": comm may hold spaces and ")".
		s := string(b)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(s[i+1:])
		if len(f) > 1 && f[1] == strconv.Itoa(pid) {
			out = append(out, p)
		}
	}
	return out, nil
}

// Tree returns pid and all its descendants.
func Tree(pid int) ([]int, error) {
	out := []int{pid}
	for i := 0; i < len(out); i++ {
		kids, err := Children(out[i])
		if err != nil {
			return nil, err
		}
		out = append(out, kids...)
	}
	return out, nil
}

func socketInodes(pid int) (map[string]bool, error) {
	dir := filepath.Join("/proc", strconv.Itoa(pid), "fd")
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("procnet: read %s: %w", dir, err)
	}
	inodes := map[string]bool{}
	for _, e := range ents {
		link, err := os.Readlink(filepath.Join(dir, e.Name()))
		if err != nil {
			continue
		}
		if in, ok := strings.CutPrefix(link, "socket:["); ok {
			inodes[strings.TrimSuffix(in, "]")] = true
		}
	}
	return inodes, nil
}

type row struct {
	addr  netip.AddrPort
	inode string
}

// listenRows reads a /proc/net/tcp{,6} table's rows in state LISTEN (0A).
func listenRows(path string) ([]row, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []row
	sc := bufio.NewScanner(f)
	sc.Scan() // header
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 10 || f[3] != "0A" {
			continue
		}
		ap, err := parseAddr(f[1])
		if err != nil {
			return nil, fmt.Errorf("procnet: %s: %w", path, err)
		}
		out = append(out, row{addr: ap, inode: f[9]})
	}
	return out, sc.Err()
}

// parseAddr reads "0100007F:1F90" (IPv4) or 32 hex digits (IPv6), each
// 32-bit word in host (little-endian) order.
func parseAddr(s string) (netip.AddrPort, error) {
	h, p, ok := strings.Cut(s, ":")
	if !ok {
		return netip.AddrPort{}, fmt.Errorf("bad address %q", s)
	}
	port, err := strconv.ParseUint(p, 16, 16)
	if err != nil {
		return netip.AddrPort{}, fmt.Errorf("bad port in %q", s)
	}
	raw, err := hex.DecodeString(h)
	if err != nil || (len(raw) != 4 && len(raw) != 16) {
		return netip.AddrPort{}, fmt.Errorf("bad address %q", s)
	}
	for i := 0; i < len(raw); i += 4 {
		raw[i], raw[i+1], raw[i+2], raw[i+3] = raw[i+3], raw[i+2], raw[i+1], raw[i]
	}
	addr, _ := netip.AddrFromSlice(raw)
	return netip.AddrPortFrom(addr.Unmap(), uint16(port)), nil
}
