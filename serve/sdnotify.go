package serve

import (
	"fmt"
	"net"
	"os"
)

// sdNotify sends state ("READY=1", "STOPPING=1") to the service manager
// when it asked for it (NOTIFY_SOCKET, as systemd's sd_notify: a
// datagram socket's path, or an abstract one when it starts with "@").
// Without NOTIFY_SOCKET it does nothing.
func sdNotify(state string) error {
	name := os.Getenv("NOTIFY_SOCKET")
	if name == "" {
		return nil
	}
	if name[0] != '/' && name[0] != '@' {
		return fmt.Errorf("NOTIFY_SOCKET %q: want an absolute path or an abstract socket (@name)", name)
	}
	addr := &net.UnixAddr{Name: name, Net: "unixgram"}
	if name[0] == '@' {
		addr.Name = "\x00" + name[1:]
	}
	conn, err := net.DialUnix("unixgram", nil, addr)
	if err != nil {
		return fmt.Errorf("NOTIFY_SOCKET %q: %w", name, err)
	}
	defer conn.Close()
	if _, err := conn.Write([]byte(state)); err != nil {
		return fmt.Errorf("NOTIFY_SOCKET %q: %w", name, err)
	}
	return nil
}
