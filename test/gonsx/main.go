// Command gonsx drives an NSX-v manager (in the tests: the simulator) through
// github.com/sky-uk/gonsx, the client library of sky-uk's terraform nsx provider: its NSXClient
// sends every call (Basic credentials, Content-Type application/xml, no Accept), decodes an answer
// only when it is 200 and labelled XML, and hands anything else back as text with the status, so
// a test sees exactly what a gonsx user sees. gonsx has no edge or IP pool package of its own in
// the version the module proxy serves; a gonsx user calls them as its api.BaseAPI allows, with
// the paths and documents its edge branch used: the edge list with lower-case
// `pagesize`/`startindex`, and an edge as a handful of top-level fields, sent back whole on update.
//
// Connection from the environment (no password in the process list): NSX_URL (http(s)://host:port,
// no trailing slash), NSX_USERNAME, NSX_PASSWORD.
//
//	gonsx list [-pagesize N] [-startindex N]     GET /api/4.0/edges?pagesize=N&startindex=N
//	gonsx get EDGE                               GET /api/4.0/edges/EDGE
//	gonsx update EDGE [-tenant T] [-name N]      GET, change, PUT the edge's fields back (a partial document)
//	gonsx create NAME [-tenant T] [-resourcepool R] [-datastore D]
//	                                             POST /api/4.0/edges
//	gonsx delete EDGE                            DELETE /api/4.0/edges/EDGE
//	gonsx pool-create NAME -start A -end B [-prefix N] [-gateway G]
//	                                             POST /api/2.0/services/ipam/pools/scope/globalroot-0
//	gonsx pool-get POOL | pool-update POOL -name N | pool-delete POOL [-force]
//
// Output (stdout): one JSON object {"status": N, "object": ...}: object is the decoded answer,
// or, as gonsx hands back any answer that is not a 200 labelled XML, its text. Exit 0 for these,
// 1 when the call could not be made, 2 for a usage error.
package main

import (
	"encoding/json"
	"encoding/xml"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"

	"github.com/sky-uk/gonsx"
	"github.com/sky-uk/gonsx/api"
)

const usage = "usage: gonsx list [-pagesize N] [-startindex N] | get EDGE | update EDGE [-tenant T] [-name N] | create NAME [-tenant T] [-resourcepool R] [-datastore D] | delete EDGE | pool-create NAME -start A -end B [-prefix N] [-gateway G] | pool-get POOL | pool-update POOL -name N | pool-delete POOL [-force]"

// edge is an edge as gonsx's edge branch typed it: a few top-level fields, nothing else
type edge struct {
	XMLName xml.Name `xml:"edge"`
	ID      string   `xml:"id,omitempty"`
	Version string   `xml:"version,omitempty"`
	Type    string   `xml:"type,omitempty"`
	Name    string   `xml:"name,omitempty"`
	Fqdn    string   `xml:"fqdn,omitempty"`
	Status  string   `xml:"status,omitempty"`
	Tenant  string   `xml:"tenant,omitempty"`
}

type pagedEdgeList struct {
	PagingInfo struct {
		PageSize   int `xml:"pageSize"`
		StartIndex int `xml:"startIndex"`
		TotalCount int `xml:"totalCount"`
	} `xml:"edgePage>pagingInfo"`
	Summaries []struct {
		ID   string `xml:"objectId"`
		Name string `xml:"name"`
	} `xml:"edgePage>edgeSummary"`
}

type appliance struct {
	ResourcePoolID string `xml:"resourcePoolId"`
	DatastoreID    string `xml:"datastoreId"`
}

type newEdge struct {
	XMLName    xml.Name    `xml:"edge"`
	Name       string      `xml:"name"`
	Tenant     string      `xml:"tenant,omitempty"`
	Type       string      `xml:"type"`
	Appliances []appliance `xml:"appliances>appliance"`
}

type ipRange struct {
	ID           string `xml:"id,omitempty"`
	StartAddress string `xml:"startAddress"`
	EndAddress   string `xml:"endAddress"`
}

type pool struct {
	XMLName           xml.Name  `xml:"ipamAddressPool"`
	ObjectID          string    `xml:"objectId,omitempty"`
	Revision          string    `xml:"revision,omitempty"`
	Name              string    `xml:"name"`
	PrefixLength      string    `xml:"prefixLength,omitempty"`
	Gateway           string    `xml:"gateway,omitempty"`
	TotalAddressCount string    `xml:"totalAddressCount,omitempty"`
	UsedAddressCount  string    `xml:"usedAddressCount,omitempty"`
	Ranges            []ipRange `xml:"ipRanges>ipRangeDto"`
}

type output struct {
	Status int         `json:"status"`
	Object interface{} `json:"object"`
}

func main() {
	out, err := run(os.Args[1:])
	if err != nil {
		var usageErr usageError
		fmt.Fprintln(os.Stderr, "gonsx:", err)
		if errors.As(err, &usageErr) {
			os.Exit(2)
		}
		os.Exit(1)
	}
	if err := writeJSON(os.Stdout, out); err != nil {
		fmt.Fprintln(os.Stderr, "gonsx:", err)
		os.Exit(1)
	}
}

type usageError struct{ error }

func run(args []string) (*output, error) {
	if len(args) < 1 {
		return nil, usageError{errors.New(usage)}
	}
	url := os.Getenv("NSX_URL")
	if url == "" {
		return nil, usageError{errors.New("NSX_URL is not set; " + usage)}
	}
	client := gonsx.NewNSXClient(url, os.Getenv("NSX_USERNAME"), os.Getenv("NSX_PASSWORD"), true, false)
	command, rest := args[0], args[1:]
	switch command {
	case "list":
		flags := flag.NewFlagSet("list", flag.ContinueOnError)
		pageSize := flags.Int("pagesize", 1024, "edges per page")
		startIndex := flags.Int("startindex", 0, "first edge")
		if err := flags.Parse(rest); err != nil {
			return nil, usageError{err}
		}
		return call(client, http.MethodGet, fmt.Sprintf("/api/4.0/edges?pagesize=%d&startindex=%d", *pageSize, *startIndex), nil, new(pagedEdgeList))
	case "get", "delete", "pool-get":
		if len(rest) != 1 {
			return nil, usageError{errors.New(usage)}
		}
		return single(client, command, rest[0])
	case "update":
		return updateEdge(client, rest)
	case "create":
		return createEdge(client, rest)
	case "pool-create":
		return createPool(client, rest)
	case "pool-update":
		return updatePool(client, rest)
	case "pool-delete":
		return deletePool(client, rest)
	}
	return nil, usageError{fmt.Errorf("unknown command %q; %s", command, usage)}
}

func single(client *gonsx.NSXClient, command, id string) (*output, error) {
	switch command {
	case "get":
		return call(client, http.MethodGet, "/api/4.0/edges/"+id, nil, new(edge))
	case "delete":
		return call(client, http.MethodDelete, "/api/4.0/edges/"+id, nil, nil)
	}
	return call(client, http.MethodGet, "/api/2.0/services/ipam/pools/"+id, nil, new(pool))
}

// call makes one call through gonsx's client and reports what gonsx hands back
func call(client *gonsx.NSXClient, method, endpoint string, request, response interface{}) (*output, error) {
	made := api.NewBaseAPI(method, endpoint, request, response)
	if err := client.Do(made); err != nil {
		return nil, err
	}
	return &output{Status: made.StatusCode(), Object: made.ResponseObject()}, nil
}

func updateEdge(client *gonsx.NSXClient, args []string) (*output, error) {
	if len(args) < 1 {
		return nil, usageError{errors.New(usage)}
	}
	flags := flag.NewFlagSet("update", flag.ContinueOnError)
	tenant := flags.String("tenant", "", "the edge's new tenant")
	name := flags.String("name", "", "the edge's new name")
	if err := flags.Parse(args[1:]); err != nil {
		return nil, usageError{err}
	}
	read, err := call(client, http.MethodGet, "/api/4.0/edges/"+args[0], nil, new(edge))
	if err != nil || read.Status != http.StatusOK {
		return read, err
	}
	current := read.Object.(*edge)
	if *tenant != "" {
		current.Tenant = *tenant
	}
	if *name != "" {
		current.Name = *name
	}
	return call(client, http.MethodPut, "/api/4.0/edges/"+args[0], current, nil)
}

func createEdge(client *gonsx.NSXClient, args []string) (*output, error) {
	if len(args) < 1 {
		return nil, usageError{errors.New(usage)}
	}
	flags := flag.NewFlagSet("create", flag.ContinueOnError)
	tenant := flags.String("tenant", "", "the edge's tenant")
	resourcePool := flags.String("resourcepool", "domain-c7", "the appliance's resource pool")
	datastore := flags.String("datastore", "datastore-15", "the appliance's datastore")
	if err := flags.Parse(args[1:]); err != nil {
		return nil, usageError{err}
	}
	spec := &newEdge{Name: args[0], Tenant: *tenant, Type: "gatewayServices", Appliances: []appliance{{ResourcePoolID: *resourcePool, DatastoreID: *datastore}}}
	return call(client, http.MethodPost, "/api/4.0/edges", spec, nil)
}

func createPool(client *gonsx.NSXClient, args []string) (*output, error) {
	if len(args) < 1 {
		return nil, usageError{errors.New(usage)}
	}
	flags := flag.NewFlagSet("pool-create", flag.ContinueOnError)
	start := flags.String("start", "", "first address")
	end := flags.String("end", "", "last address")
	prefix := flags.String("prefix", "24", "prefix length")
	gateway := flags.String("gateway", "", "gateway")
	if err := flags.Parse(args[1:]); err != nil {
		return nil, usageError{err}
	}
	spec := &pool{Name: args[0], PrefixLength: *prefix, Gateway: *gateway, Ranges: []ipRange{{StartAddress: *start, EndAddress: *end}}}
	return call(client, http.MethodPost, "/api/2.0/services/ipam/pools/scope/globalroot-0", spec, nil)
}

func updatePool(client *gonsx.NSXClient, args []string) (*output, error) {
	if len(args) < 1 {
		return nil, usageError{errors.New(usage)}
	}
	flags := flag.NewFlagSet("pool-update", flag.ContinueOnError)
	name := flags.String("name", "", "the pool's new name")
	if err := flags.Parse(args[1:]); err != nil {
		return nil, usageError{err}
	}
	read, err := call(client, http.MethodGet, "/api/2.0/services/ipam/pools/"+args[0], nil, new(pool))
	if err != nil || read.Status != http.StatusOK {
		return read, err
	}
	current := read.Object.(*pool)
	current.Name = *name
	return call(client, http.MethodPut, "/api/2.0/services/ipam/pools/"+args[0], current, nil)
}

func deletePool(client *gonsx.NSXClient, args []string) (*output, error) {
	if len(args) < 1 {
		return nil, usageError{errors.New(usage)}
	}
	flags := flag.NewFlagSet("pool-delete", flag.ContinueOnError)
	force := flags.Bool("force", false, "delete with its allocations")
	if err := flags.Parse(args[1:]); err != nil {
		return nil, usageError{err}
	}
	endpoint := "/api/2.0/services/ipam/pools/" + args[0]
	if *force {
		endpoint += "?force=true"
	}
	return call(client, http.MethodDelete, endpoint, nil, nil)
}

func writeJSON(w io.Writer, out *output) error {
	// gonsx hands back a non-XML or non-200 answer as a string: keep it a string
	if text, ok := out.Object.(string); ok {
		out.Object = strings.TrimSpace(text)
	}
	return json.NewEncoder(w).Encode(out)
}
