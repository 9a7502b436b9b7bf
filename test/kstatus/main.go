// Command kstatus judges Kubernetes objects with sigs.k8s.io/cli-utils' kstatus, the library Flux,
// kpt and cli-utils' apply use to decide whether a resource is Current: the integration tests ask
// it rather than a re-implementation of its rules.
//
// Input (stdin): a JSON array of objects as the API server returns them. Output (stdout): a JSON
// array of {"status", "message"}, one per object, in order. Objects are decoded with
// apimachinery's unstructured JSON decoding, as a client would: a plain encoding/json map turns
// metadata.generation into a float, which kstatus refuses.
package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"
)

type verdict struct {
	Status  string `json:"status"`
	Message string `json:"message"`
}

func main() {
	if err := run(os.Stdin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "kstatus:", err)
		os.Exit(1)
	}
}

func run(in io.Reader, out io.Writer) error {
	var raw []json.RawMessage
	if err := json.NewDecoder(in).Decode(&raw); err != nil {
		return fmt.Errorf("reading a JSON array of objects: %w", err)
	}
	verdicts := make([]verdict, 0, len(raw))
	for i, item := range raw {
		object := &unstructured.Unstructured{}
		if err := object.UnmarshalJSON(item); err != nil {
			return fmt.Errorf("object %d: %w", i, err)
		}
		result, err := status.Compute(object)
		if err != nil {
			return fmt.Errorf("object %d (%s %s): %w", i, object.GetKind(), object.GetName(), err)
		}
		verdicts = append(verdicts, verdict{Status: result.Status.String(), Message: result.Message})
	}
	return json.NewEncoder(out).Encode(verdicts)
}
