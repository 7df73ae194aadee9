package mcpserver

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/ctxd/ctxd/daemon/toolset"
	ctxdv1 "github.com/ctxd/ctxd/gen/ctxd/v1"
)

const (
	// ResourcePageSize is the most items one resources/list page holds.
	ResourcePageSize = 100
	// MaxListedResources bounds what resources/list offers in all, over
	// every page: a host that pages through the whole list loads at most
	// this many entries. Every item stays readable by its URI, and the
	// tools (context_tree, context_search) reach the rest.
	MaxListedResources = 1000
)

// listedDrives are the drives resources/list walks, in order: the agent's
// context files, then its own items.
var listedDrives = []string{"self", "agent"}

// itemURI is the resource URI of an item: ctxd://DRIVE/PATH, the path's
// segments escaped.
func itemURI(drive, path string) string {
	return (&url.URL{Scheme: "ctxd", Host: drive, Path: path}).String()
}

// refOfURI is the drive:/path ref of a resource URI.
func refOfURI(uri string) (string, error) {
	u, err := url.Parse(uri)
	if err != nil || u.Scheme != "ctxd" || u.Host == "" || !strings.HasPrefix(u.Path, "/") || u.RawQuery != "" || u.Fragment != "" || u.User != nil {
		return "", invalidArgument(fmt.Sprintf("%q is not an item URI", uri),
			"Name an item as ctxd://DRIVE/PATH, for example ctxd://agent/notes/plan.md for agent:/notes/plan.md; resources/list and the context_tree tool show what exists.")
	}
	return u.Host + ":" + u.Path, nil
}

// readResource reads the item of uri whole: text as text, anything else as
// a blob, with the item's MIME type.
func readResource(ctx context.Context, b toolset.Backend, uri string) (*mcp.ReadResourceResult, error) {
	ref, err := refOfURI(uri)
	if err != nil {
		return nil, requestError(uri, err)
	}
	resp, err := b.Vfs.Read(ctx, &ctxdv1.ReadRequest{Ref: ref, Raw: true})
	if err != nil {
		return nil, requestError(uri, err)
	}
	c := &mcp.ResourceContents{URI: uri, MIMEType: resp.GetItem().GetMimeType()}
	if resp.GetItem().GetIsText() {
		c.Text = string(resp.GetData())
	} else {
		c.Blob = resp.GetData()
	}
	res := &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{c}}
	res.CacheScope = "private" // what a token may read is its own
	return res, nil
}

// listCursor is where the next resources/list page starts: a drive of
// listedDrives, the List page token within it, and how many items earlier
// pages listed. It travels as base64url JSON, opaque to the client.
type listCursor struct {
	Drive  int    `json:"d"`
	Page   string `json:"p,omitempty"`
	Listed int    `json:"n"`
}

func (c listCursor) encode() string {
	b, _ := json.Marshal(c) // ints and a string always marshal
	return base64.RawURLEncoding.EncodeToString(b)
}

func decodeCursor(s string) (listCursor, error) {
	var c listCursor
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err == nil {
		err = json.Unmarshal(b, &c)
	}
	if err != nil || c.Drive < 0 || c.Drive > len(listedDrives) || c.Listed < 0 {
		return c, invalidArgument("the resources/list cursor is not one this server returned",
			"Pass back the nextCursor of the previous resources/list result unchanged, or no cursor for the first page.")
	}
	return c, nil
}

// listResources answers resources/list: the items (not directories) of the
// self and agent drives in path order, ResourcePageSize at most per page and
// MaxListedResources in all. A drive the caller can not see, or that does
// not exist, is skipped. Each page makes at most one List call per drive.
func listResources(ctx context.Context, b toolset.Backend, cursor string) (*mcp.ListResourcesResult, error) {
	c := listCursor{}
	if cursor != "" {
		var err error
		if c, err = decodeCursor(cursor); err != nil {
			return nil, requestError("", err)
		}
	}
	res := &mcp.ListResourcesResult{Resources: []*mcp.Resource{}}
	// The list depends on the caller's token: no shared cache may keep it.
	res.CacheScope = "private"
	want := min(ResourcePageSize, MaxListedResources-c.Listed)
	for c.Drive < len(listedDrives) && len(res.Resources) < want {
		resp, err := b.Vfs.List(ctx, &ctxdv1.ListRequest{
			Ref: listedDrives[c.Drive] + ":", Recursive: true,
			Limit: int32(want - len(res.Resources)), PageToken: c.Page,
		})
		if err != nil && status.Code(err) != codes.NotFound {
			return nil, requestError("", err)
		}
		for _, e := range resp.GetEntries() {
			if it := e.GetItem(); it != nil && !it.GetIsDir() {
				res.Resources = append(res.Resources, &mcp.Resource{
					URI: itemURI(it.GetDrive(), it.GetPath()), Name: it.GetRef(), Title: it.GetTitle(),
					Description: it.GetDescription(), MIMEType: it.GetMimeType(), Size: it.GetSizeBytes(),
				})
			}
		}
		if next := resp.GetNextPageToken(); next != "" {
			c.Page = next
			break
		}
		c.Drive, c.Page = c.Drive+1, ""
	}
	c.Listed += len(res.Resources)
	if c.Drive < len(listedDrives) && c.Listed < MaxListedResources {
		res.NextCursor = c.encode()
	}
	return res, nil
}
