/*
Copyright 2026 The serin authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package outbound

import (
	"fmt"
	"net"
	"net/netip"
	"syscall"
	"time"
)

// metadataAddresses are cloud instance metadata services outside the
// link-local ranges.
var metadataAddresses = []netip.Addr{
	netip.MustParseAddr("100.100.100.200"), // Alibaba Cloud
	netip.MustParseAddr("fd00:ec2::254"),   // AWS, over IPv6
}

// LocalAddressError is a connection refused because its address is the
// agent's own host (loopback, unspecified), a link-local address or a
// cloud metadata service.
type LocalAddressError struct {
	Address string
}

func (e *LocalAddressError) Error() string {
	return fmt.Sprintf("serin does not connect to %s (a loopback, link-local or metadata address) on a tenant's behalf", e.Address)
}

// refuseLocal is a net.Dialer Control that refuses, once the name is
// resolved, to connect to a loopback address (unless allowLoopback), an
// unspecified, link-local or cloud metadata address.
func refuseLocal(allowLoopback bool) func(network, address string, _ syscall.RawConn) error {
	return func(_, address string, _ syscall.RawConn) error {
		ap, err := netip.ParseAddrPort(address)
		if err != nil {
			return &LocalAddressError{Address: address}
		}
		ip := ap.Addr().Unmap()
		switch {
		case ip.IsLoopback() && allowLoopback:
			return nil
		case ip.IsLoopback(), ip.IsUnspecified(), ip.IsLinkLocalUnicast(), ip.IsLinkLocalMulticast(), ip.IsInterfaceLocalMulticast():
			return &LocalAddressError{Address: ip.String()}
		}
		for _, m := range metadataAddresses {
			if ip == m {
				return &LocalAddressError{Address: ip.String()}
			}
		}
		return nil
	}
}

// dialer is the transport's dialer under opts' address policy.
func dialer(opts Options) *net.Dialer {
	d := &net.Dialer{Timeout: DialTimeout, KeepAlive: 30 * time.Second}
	if opts.RefuseLocal {
		d.Control = refuseLocal(opts.AllowLoopback)
	}
	return d
}
