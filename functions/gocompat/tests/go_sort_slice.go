// Generates tests/go_sort_slice.json: for key lists with many ties, the
// permutation Go's sort.Slice leaves (which original index ends where).
// Run with any Go since 1.19: go run tests/go_sort_slice.go > tests/go_sort_slice.json
package main

import (
	"encoding/json"
	"os"
	"sort"
)

type tagged struct {
	key int
	tag int
}

func main() {
	var cases []map[string]any
	for _, n := range []int{13, 20, 49, 50, 51, 64, 100, 257} {
		for _, mod := range []int{1, 2, 3, 7} {
			for _, shape := range []string{"mix", "asc", "desc"} {
				keys := make([]int, n)
				for i := range keys {
					switch shape {
					case "mix":
						keys[i] = (i * 7919) % mod
					case "asc":
						keys[i] = i * mod / n
					case "desc":
						keys[i] = (n - i) * mod / n
					}
				}
				items := make([]tagged, n)
				for i, k := range keys {
					items[i] = tagged{k, i}
				}
				sort.Slice(items, func(i, j int) bool { return items[i].key < items[j].key })
				order := make([]int, n)
				for i, it := range items {
					order[i] = it.tag
				}
				cases = append(cases, map[string]any{"keys": keys, "order": order})
			}
		}
	}
	enc := json.NewEncoder(os.Stdout)
	_ = enc.Encode(cases)
}
