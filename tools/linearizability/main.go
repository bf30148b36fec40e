// Command linearizability checks a recorded key-value history with Porcupine.
//
// Usage: linearizability HISTORY.json VISUALIZATION.html
//
// The history is a JSON array of operations, each
//
//	{"client": 0, "op": "write"|"read", "key": "k", "value": "v", "call": ns, "ret": ns, "unknown": false}
//
// A write stores `value` under `key`; a read returned `value` ("" when the key was absent). A write
// whose outcome is unknown (a timeout, a 5xx) has "unknown": true: it may or may not have taken
// effect, at any time after its call, so its return is taken as "never". Reads with an unknown
// outcome are left out by the recorder (they change nothing).
//
// Exit status: 0 linearizable, 1 not linearizable (the visualization is written), 2 the check
// timed out or the input is bad.
package main

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"time"

	"github.com/anishathalye/porcupine"
)

type recorded struct {
	Client  int    `json:"client"`
	Op      string `json:"op"`
	Key     string `json:"key"`
	Value   string `json:"value"`
	Call    int64  `json:"call"`
	Ret     int64  `json:"ret"`
	Unknown bool   `json:"unknown"`
}

type input struct {
	write bool
	key   string
	value string
}

// registerModel is one register per key: the history is partitioned by key, so the state is the
// key's current value.
var registerModel = porcupine.Model{
	Partition: func(history []porcupine.Operation) [][]porcupine.Operation {
		byKey := map[string][]porcupine.Operation{}
		var order []string
		for _, op := range history {
			k := op.Input.(input).key
			if _, seen := byKey[k]; !seen {
				order = append(order, k)
			}
			byKey[k] = append(byKey[k], op)
		}
		out := make([][]porcupine.Operation, 0, len(order))
		for _, k := range order {
			out = append(out, byKey[k])
		}
		return out
	},
	Init: func() interface{} { return "" },
	Step: func(state, in, out interface{}) (bool, interface{}) {
		i := in.(input)
		if i.write {
			return true, i.value
		}
		return out.(string) == state.(string), state
	},
	DescribeOperation: func(in, out interface{}) string {
		i := in.(input)
		if i.write {
			return fmt.Sprintf("write(%s, %s)", i.key, i.value)
		}
		return fmt.Sprintf("read(%s) -> %s", i.key, out.(string))
	},
	DescribeState: func(state interface{}) string { return fmt.Sprintf("%q", state.(string)) },
}

func load(path string) ([]porcupine.Operation, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var ops []recorded
	if err := json.Unmarshal(raw, &ops); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	history := make([]porcupine.Operation, 0, len(ops))
	for n, r := range ops {
		if r.Op != "write" && r.Op != "read" {
			return nil, fmt.Errorf("%s: operation %d: op %q is neither write nor read", path, n, r.Op)
		}
		if r.Op == "read" && r.Unknown {
			continue
		}
		ret := r.Ret
		if r.Unknown {
			ret = math.MaxInt64
		}
		if ret < r.Call {
			return nil, fmt.Errorf("%s: operation %d returns (%d) before its call (%d)", path, n, ret, r.Call)
		}
		history = append(history, porcupine.Operation{
			ClientId: r.Client,
			Input:    input{write: r.Op == "write", key: r.Key, value: r.Value},
			Call:     r.Call,
			Output:   r.Value,
			Return:   ret,
		})
	}
	return history, nil
}

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: linearizability HISTORY.json VISUALIZATION.html")
		os.Exit(2)
	}
	history, err := load(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	result, info := porcupine.CheckOperationsVerbose(registerModel, history, 60*time.Second)
	switch result {
	case porcupine.Ok:
		fmt.Printf("linearizable: %d operations\n", len(history))
	case porcupine.Illegal:
		if err := porcupine.VisualizePath(registerModel, info, os.Args[2]); err != nil {
			fmt.Fprintln(os.Stderr, "visualization:", err)
		}
		fmt.Printf("not linearizable: %d operations; visualization: %s\n", len(history), os.Args[2])
		os.Exit(1)
	default:
		fmt.Printf("unknown: the check of %d operations timed out\n", len(history))
		os.Exit(2)
	}
}
