package httpapi

import (
	"bytes"
	"errors"
	"io"
	"mime"
	"net/http"
	"reflect"
	"strings"
)

// archiveTypes are the content types accepted for a raw archive body. The
// archive format itself is recognized by its magic bytes (pack.ReadArchive),
// so these only keep out bodies that are plainly something else, such as
// the form encoding curl uses by default.
var archiveTypes = map[string]bool{
	"application/zip":              true,
	"application/x-zip-compressed": true,
	"application/gzip":             true,
	"application/x-gzip":           true,
	"application/x-tar":            true,
	"application/x-gtar":           true,
	"application/x-compressed-tar": true,
	"application/octet-stream":     true,
}

// maxFormField bounds a non-file multipart field (name, description,
// lenient): a description is at most 1,024 characters.
const maxFormField = 64 << 10

// uploadFormField is the multipart field holding the archive.
const uploadFormField = "file"

// readArchive reads an archive upload into the params' archive field: the
// raw body, or the "file" field of a multipart form whose other fields are
// the route's query parameters. It returns those form fields.
func (d *decoder) readArchive(w http.ResponseWriter, r *http.Request, v reflect.Value) (map[string]string, error) {
	target := fieldValue(v, d.archive)
	ct := r.Header.Get("Content-Type")
	mt, _, err := mime.ParseMediaType(ct)
	if ct == "" {
		mt, err = "application/octet-stream", nil
	}
	if err != nil {
		return nil, unsupportedType(ct)
	}
	if mt == "multipart/form-data" {
		return d.readMultipart(w, r, target)
	}
	if !archiveTypes[mt] {
		return nil, unsupportedType(ct)
	}
	data, err := readBody(w, r, MaxArchiveBody, "archive uploads")
	if err != nil {
		return nil, err
	}
	target.SetBytes(data)
	return map[string]string{}, nil
}

func unsupportedType(ct string) error {
	e := badRequest("Content-Type", "Content-Type %q is not an archive: send the zip, tar or tar.gz as the raw body with "+
		"Content-Type application/zip, application/gzip, application/x-tar or application/octet-stream, "+
		"or as the field %q of a multipart/form-data body", ct, uploadFormField).(*requestError)
	e.status = http.StatusUnsupportedMediaType
	return e
}

// readMultipart streams the parts of a form: the archive into target, the
// other fields (each at most maxFormField bytes) into the returned map.
// The whole body is under MaxArchiveBody whatever the parts claim.
func (d *decoder) readMultipart(w http.ResponseWriter, r *http.Request, target reflect.Value) (map[string]string, error) {
	if r.ContentLength > MaxArchiveBody {
		return nil, tooLarge(MaxArchiveBody, "archive uploads")
	}
	r.Body = http.MaxBytesReader(w, r.Body, MaxArchiveBody)
	mr, err := r.MultipartReader()
	if err != nil {
		return nil, badRequest("Content-Type", "malformed multipart body: %v", err)
	}
	form := map[string]string{}
	found := false
	for {
		part, err := mr.NextPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, bodyError(partError(err), MaxArchiveBody, "archive uploads")
		}
		name := part.FormName()
		switch _, known := d.query[name]; {
		case name == uploadFormField:
			if found {
				return nil, badRequest(name, "the form has more than one %q field; upload one archive at a time", name)
			}
			var buf bytes.Buffer
			if _, err := buf.ReadFrom(part); err != nil {
				return nil, bodyError(partError(err), MaxArchiveBody, "archive uploads")
			}
			target.SetBytes(buf.Bytes())
			found = true
		case known:
			if _, dup := form[name]; dup {
				return nil, badRequest(name, "form field %q is given more than once", name)
			}
			b, err := io.ReadAll(io.LimitReader(part, maxFormField+1))
			if err != nil {
				return nil, bodyError(partError(err), MaxArchiveBody, "archive uploads")
			}
			if len(b) > maxFormField {
				return nil, badRequest(name, "form field %q is over %d bytes", name, maxFormField)
			}
			form[name] = string(b)
		default:
			return nil, badRequest(name, "unknown form field %q: the archive goes in %q%s", name, uploadFormField, strings.Replace(d.known(), "this route takes", "other fields are", 1))
		}
		part.Close()
	}
	if !found {
		return nil, badRequest(uploadFormField, "the multipart form has no %q field holding the archive", uploadFormField)
	}
	return form, nil
}

// partError keeps the body-size error visible through the multipart
// reader, which wraps what the body reader returned.
func partError(err error) error {
	if mbe := (*http.MaxBytesError)(nil); errors.As(err, &mbe) {
		return mbe
	}
	if strings.Contains(err.Error(), "request body too large") {
		return &http.MaxBytesError{Limit: MaxArchiveBody}
	}
	return err
}
