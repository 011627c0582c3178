// Generates ../net_cases.json: what Go's net package makes of CIDR strings
// (net.ParseCIDR, IPNet.String, net.IP(mask).String) and of addresses
// (IP.String), for the differential test of src/ip.rs.
// Run with any Go: go run net_cases.go > ../net_cases.json
package main

import (
	"encoding/json"
	"math/rand"
	"net"
	"os"
)

func main() {
	cidrs := []string{
		"10.0.0.0/8", "10.1.2.3/16", "127.0.0.0/24", "0.0.0.0/0", "255.255.255.255/32",
		"10.0.0.0", "10.0.0.0/33", "010.0.0.0/8", "10.0.0.0/+8", "10.0.0.0/08", "10.0.0/8",
		"1.2.3.4/-1", "10.0.0.256/8", " 10.0.0.0/8", "10.0.0.0/8 ", "10.0.0.0/", "/8",
		"2001:db8::/32", "2001:DB8:0:0:1::1/64", "::/0", "::1/128", "fe80::1%eth0/64",
		"2001:db8::/129", "2001:db8:::/32", "1:2:3:4:5:6:7:8/96", "1:2:3:4:5:6:7:8:9/96",
		"::ffff:0:0/96", "64:ff9b::1.2.3.4/96", "2600:1f18:abcd:ef00::/56", "fd00::/8",
		"1::/16", "0:0:0:0:0:0:0:1/128", "2001:db8:0:0:0:0:2:1/64", "abcd:ef01::/00032",
	}
	type cidrCase struct {
		In      string `json:"in"`
		Ok      bool   `json:"ok"`
		Err     string `json:"err,omitempty"`
		Network string `json:"network,omitempty"`
		Mask    string `json:"mask,omitempty"`
	}
	var cc []cidrCase
	for _, s := range cidrs {
		_, n, err := net.ParseCIDR(s)
		if err != nil {
			cc = append(cc, cidrCase{In: s, Err: err.Error()})
			continue
		}
		cc = append(cc, cidrCase{In: s, Ok: true, Network: n.String(), Mask: net.IP(n.Mask).String()})
	}
	type ipCase struct {
		Bytes []int  `json:"bytes"`
		Text  string `json:"text"`
	}
	var ic []ipCase
	r := rand.New(rand.NewSource(1))
	for i := 0; i < 300; i++ {
		b := make([]byte, 16)
		for j := range b {
			// Mostly zero groups, to exercise the :: compression.
			if r.Intn(3) == 0 {
				b[j] = byte(r.Intn(256))
			}
		}
		if i%10 == 0 {
			copy(b, []byte{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff})
		}
		ints := make([]int, 16)
		for j := range b {
			ints[j] = int(b[j])
		}
		ic = append(ic, ipCase{ints, net.IP(b).String()})
	}
	_ = json.NewEncoder(os.Stdout).Encode(map[string]any{"cidrs": cc, "ips": ic})
}
