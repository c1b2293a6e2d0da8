// Package silent gives tests a peer that hangs: a loopback listener that
// accepts connections, reads what they send and never answers.
package silent

import (
	"io"
	"net"
	"sync"
	"testing"
)

// Listen listens on a free loopback port until tb ends and returns its
// address. Every connection is accepted and read, and never answered: a
// Redis, an HTTP server or a proxy that hangs.
func Listen(tb testing.TB) string {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	var (
		mu    sync.Mutex
		conns []net.Conn
		wg    sync.WaitGroup
	)
	wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
			go io.Copy(io.Discard, c) // read what is sent, answer nothing
		}
	})
	tb.Cleanup(func() {
		ln.Close()
		wg.Wait()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	})
	return ln.Addr().String()
}
