package fsync

import "os"

// Dir syncs the directory dir, making the renames and creations in it
// durable.
func Dir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
