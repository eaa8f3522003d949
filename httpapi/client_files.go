package httpapi

import (
	"context"
	"io"
	"net/http"
	"strings"

	"github.com/skilld/skilld"
	"github.com/skilld/skilld/service"
)

// Upload creates a skill from a zip, tar or tar.gz archive of size bytes,
// streamed as the request body (skills.create_from_archive).
func (c *Client) Upload(ctx context.Context, archive io.Reader, size int64, opts service.SkillOptions) (*service.SkillView, error) {
	return call(ctx, c, service.OpSkillsCreateFromArchive, service.CreateSkillFromArchiveParams{SkillOptions: opts}, archive, size)
}

// Publish publishes an archive as the next version of a catalog item in
// registry (catalog.items.publish; instance admins).
func (c *Client) Publish(ctx context.Context, registry string, archive io.Reader, size int64, opts service.SkillOptions, bundle string) (*service.PublishedItem, error) {
	return call(ctx, c, service.OpCatalogItemsPublish, service.PublishCatalogItemParams{Registry: registry, Bundle: bundle, SkillOptions: opts}, archive, size)
}

// TaskEvents reads a task's log in one answer (tasks.events with
// ?format=json): the entries after p.After, at most p.Limit. A live
// stream of them is a GET of the route with Accept: text/event-stream.
func (c *Client) TaskEvents(ctx context.Context, p service.TaskEventsParams) (*TaskEventList, error) {
	rt, err := clientRoute(service.OpTasksEvents.Operation)
	if err != nil {
		return nil, err
	}
	p.Format = "json"
	var out TaskEventList
	if err := c.send(ctx, rt, p, nil, 0, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// GetFile opens one file of a skill's current version (skills.get_file).
// The caller closes the body. The returned PackageFile has the path, the
// digest (from the ETag), the size and the exec bit.
func (c *Client) GetFile(ctx context.Context, id, path string) (io.ReadCloser, skilld.PackageFile, error) {
	return c.GetFileVersion(ctx, id, path, 0)
}

// GetFileVersion is GetFile for version n of the skill (0: the current).
func (c *Client) GetFileVersion(ctx context.Context, id, path string, n int) (io.ReadCloser, skilld.PackageFile, error) {
	rt, err := clientRoute(service.OpSkillsGetFile.Operation)
	if err != nil {
		return nil, skilld.PackageFile{}, err
	}
	p := service.GetSkillFileParams{SkillRef: service.SkillRef{ID: id}, Path: path, Version: n}
	req, err := c.newRequest(ctx, rt, p, nil, 0)
	if err != nil {
		return nil, skilld.PackageFile{}, err
	}
	req.Header.Set("Accept", "*/*")
	resp, err := c.do(req)
	if err != nil {
		return nil, skilld.PackageFile{}, err
	}
	if resp.StatusCode != http.StatusOK {
		resp.Body.Close()
		return nil, skilld.PackageFile{}, skilld.Errorf(skilld.EINTERNAL, "unexpected answer %s to a file download", resp.Status)
	}
	f := skilld.PackageFile{
		Path:   path,
		Digest: strings.Trim(resp.Header.Get("ETag"), `"`),
		Size:   resp.ContentLength,
		Exec:   resp.Header.Get("X-Skilld-Exec") == "true",
	}
	return resp.Body, f, nil
}
