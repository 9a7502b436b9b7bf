// Command govnsx drives an NSX-v manager (in the tests: the simulator) with
// github.com/IBM-tfproviders/govnsx, the client library of the terraform nsxv provider, so that a
// test sees exactly what that third-party client sees: how it reads an edge, what its update sends
// and how it reports a manager's errors.
//
// Connection from the environment (no password in the process list): NSX_URL (http(s)://host:port,
// no trailing slash), NSX_USERNAME, NSX_PASSWORD.
//
//	govnsx get EDGE                          the edge as govnsx reads it
//	govnsx update EDGE [-name N] [-description D]
//	                                         the terraform provider's update: read the edge, build an
//	                                         install spec from it, change what was given, PUT it
//	govnsx create NAME [-tenant T] [-datacenter DCNAME] [-resourcepool R] [-datastore D] [-size S]
//	                                         the terraform provider's create: an install spec, Edge.Post
//	govnsx delete EDGE                       Edge.Delete
//
// Output (stdout): one JSON object, {"edge": {...}} (govnsx's nsxtypes.Edge), {"updated": true},
// {"created": {"EdgeId": ..., "Location": ...}} (govnsx's EdgePostResp: the id is the Location
// header's last segment), {"deleted": true}, or {"error": "..."} with govnsx's own error text.
// Exit 0 for these; 2 for a usage error.
package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/IBM-tfproviders/govnsx"
	"github.com/IBM-tfproviders/govnsx/nsxresource"
	"github.com/IBM-tfproviders/govnsx/nsxtypes"
)

const usage = "usage: govnsx get EDGE | govnsx update EDGE [-name N] [-description D] | govnsx create NAME [-tenant T] [-datacenter DCNAME] [-resourcepool R] [-datastore D] [-size S] | govnsx delete EDGE (NSX_URL, NSX_USERNAME, NSX_PASSWORD in the environment)"

type result struct {
	Edge    *nsxtypes.Edge         `json:"edge,omitempty"`
	Updated bool                   `json:"updated,omitempty"`
	Created *nsxtypes.EdgePostResp `json:"created,omitempty"`
	Deleted bool                   `json:"deleted,omitempty"`
	Error   string                 `json:"error,omitempty"`
}

// changes holds the attributes a terraform plan changed; nil means unchanged
type changes struct {
	name        *string
	description *string
}

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "govnsx:", err)
		os.Exit(2)
	}
}

func run(args []string, out io.Writer) error {
	if len(args) < 2 {
		return errors.New(usage)
	}
	command, edgeID := args[0], args[1]
	url := os.Getenv("NSX_URL")
	if url == "" {
		return errors.New("NSX_URL is not set; " + usage)
	}
	client, err := govnsx.NewClient(&govnsx.NsxManagerConfig{
		UserName:      os.Getenv("NSX_USERNAME"),
		Password:      os.Getenv("NSX_PASSWORD"),
		Uri:           url,
		UserAgentName: "nsxv-operator-tests/govnsx",
	})
	if err != nil {
		return err
	}
	edges := nsxresource.NewEdge(client)
	var res result
	switch command {
	case "get":
		edge, err := edges.Get(edgeID)
		if err != nil {
			res.Error = err.Error()
		} else {
			res.Edge = edge
		}
	case "update":
		wanted, err := parseChanges(args[2:])
		if err != nil {
			return err
		}
		if err := update(edges, edgeID, wanted); err != nil {
			res.Error = err.Error()
		} else {
			res.Updated = true
		}
	case "create":
		spec, err := parseInstallSpec(edgeID, args[2:])
		if err != nil {
			return err
		}
		if created, err := edges.Post(spec); err != nil {
			res.Error = err.Error()
		} else {
			res.Created = created
		}
	case "delete":
		if err := edges.Delete(edgeID); err != nil {
			res.Error = err.Error()
		} else {
			res.Deleted = true
		}
	default:
		return fmt.Errorf("unknown command %q; %s", command, usage)
	}
	return json.NewEncoder(out).Encode(res)
}

// parseInstallSpec builds the install spec the terraform provider's edge create sends: a name,
// the datacenter by name, one appliance and its size, no vnics.
func parseInstallSpec(name string, args []string) (*nsxtypes.EdgeInstallSpec, error) {
	flags := flag.NewFlagSet("create", flag.ContinueOnError)
	tenant := flags.String("tenant", "", "the edge's tenant")
	datacenter := flags.String("datacenter", "", "the datacenter's name")
	resourcePool := flags.String("resourcepool", "domain-c7", "the appliance's resource pool")
	datastore := flags.String("datastore", "datastore-15", "the appliance's datastore")
	size := flags.String("size", "compact", "the appliance size")
	if err := flags.Parse(args); err != nil {
		return nil, err
	}
	return &nsxtypes.EdgeInstallSpec{
		Name:       name,
		Tenant:     *tenant,
		Datacenter: *datacenter,
		Type:       "gatewayServices",
		Appliances: nsxtypes.Appliances{
			ApplianceSize:    *size,
			DeployAppliances: true,
			AppliancesList:   []nsxtypes.Appliance{{ResourcePoolId: *resourcePool, DatastoreId: *datastore}},
		},
	}, nil
}

func parseChanges(args []string) (changes, error) {
	flags := flag.NewFlagSet("update", flag.ContinueOnError)
	name := flags.String("name", "", "the edge's new name")
	description := flags.String("description", "", "the edge's new description")
	if err := flags.Parse(args); err != nil {
		return changes{}, err
	}
	var wanted changes
	flags.Visit(func(f *flag.Flag) {
		switch f.Name {
		case "name":
			wanted.name = name
		case "description":
			wanted.description = description
		}
	})
	return wanted, nil
}

// update does what the terraform nsxv provider's edge update does: read the edge, carry its name,
// description, tenant and appliances into an EdgeInstallSpec (nothing else of the edge), apply the
// changed attributes, and PUT the spec. Every other part of the edge is left out of the PUT.
func update(edges *nsxresource.Edge, edgeID string, wanted changes) error {
	current, err := edges.Get(edgeID)
	if err != nil {
		return err
	}
	spec := &nsxtypes.EdgeInstallSpec{
		Name:        current.Name,
		Description: current.Description,
		Tenant:      current.Tenant,
		Appliances:  current.Appliances,
	}
	if wanted.name != nil {
		spec.Name = *wanted.name
	}
	if wanted.description != nil {
		spec.Description = *wanted.description
	}
	return edges.Put(spec, edgeID)
}
