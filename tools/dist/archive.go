package dist

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"sort"
	"time"
)

// Entry is one regular file in a tarball.
type Entry struct {
	Name string // path inside the archive, slash-separated
	Mode int64  // permission bits
	Data []byte
}

// WriteTarGz writes entries as a reproducible gzip-compressed tarball: a
// top directory named dir, entries sorted by name, every header with the
// same mtime, uid/gid 0 and no owner names, and a gzip header without name
// or timestamp. The same inputs give the same bytes on any machine with the
// same Go release (compress/flate is deterministic).
func WriteTarGz(w io.Writer, dir string, mtime time.Time, entries []Entry) error {
	mtime = mtime.UTC().Truncate(time.Second)
	sorted := append([]Entry(nil), entries...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].Name < sorted[j].Name })

	zw, err := gzip.NewWriterLevel(w, gzip.BestCompression)
	if err != nil {
		return err
	}
	tw := tar.NewWriter(zw)
	hdr := func(name string, typ byte, mode, size int64) *tar.Header {
		return &tar.Header{
			Typeflag: typ, Name: name, Mode: mode, Size: size,
			ModTime: mtime, Format: tar.FormatUSTAR,
			// Uid, Gid, Uname and Gname stay zero/empty on purpose.
		}
	}
	if err := tw.WriteHeader(hdr(dir+"/", tar.TypeDir, 0o755, 0)); err != nil {
		return err
	}
	for i, e := range sorted {
		if i > 0 && sorted[i-1].Name == e.Name {
			return fmt.Errorf("duplicate tarball entry %q", e.Name)
		}
		if err := tw.WriteHeader(hdr(dir+"/"+e.Name, tar.TypeReg, e.Mode, int64(len(e.Data)))); err != nil {
			return err
		}
		if _, err := tw.Write(e.Data); err != nil {
			return err
		}
	}
	if err := tw.Close(); err != nil {
		return err
	}
	return zw.Close()
}

// ReadTarGz returns the regular files of a tarball by name (the top
// directory kept in the name) and the headers in archive order; tests and
// the SHA256SUMS self-check use it.
func ReadTarGz(data []byte) (map[string][]byte, []*tar.Header, error) {
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		return nil, nil, err
	}
	tr := tar.NewReader(zr)
	files := map[string][]byte{}
	var headers []*tar.Header
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, nil, err
		}
		headers = append(headers, h)
		if h.Typeflag != tar.TypeReg {
			continue
		}
		b, err := io.ReadAll(tr)
		if err != nil {
			return nil, nil, err
		}
		files[h.Name] = b
	}
	return files, headers, zr.Close()
}
