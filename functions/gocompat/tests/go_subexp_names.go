// Generates go_subexp_names.json: Go's regexp SubexpNames of patterns, for
// the differential test of goregex::subexp_names. (`(?<name>...)` needs Go
// 1.22 or later and is left out, so that Go 1.19 can run this too.)
// Run with any Go: go run go_subexp_names.go > go_subexp_names.json
package main

import (
	"encoding/json"
	"os"
	"regexp"
)

func main() {
	patterns := []string{
		`a`, `(a)`, `(?P<x>a)(b)`, `(?:a)(?P<y>b)`, `[(](a)`, `\((a)\)`, `(?i)(a)`,
		`(?i:a)(b)`, `([()])(c)`, `[[:alpha:](](d)`, `\Q(\E(e)`, `(?P<Error>.+)`,
		`Something went wrong: (?P<Error>.+)`, `((a)(?P<n>b))`, `[\]](f)`, `[^]](g)`,
		`(?s)(.)`, `x|(y)|(?P<z>z)`, `(a)(b)(c)(d)(e)(f)(g)(h)(i)(j)(k)`,
	}
	out := map[string][]string{}
	for _, p := range patterns {
		out[p] = regexp.MustCompile(p).SubexpNames()
	}
	_ = json.NewEncoder(os.Stdout).Encode(out)
}
