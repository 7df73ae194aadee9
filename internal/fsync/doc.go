// Package fsync makes file-system changes durable: after a rename or a new
// file in a directory, the directory itself must be synced, or a crash can
// forget the entry even though the file's data reached the disk.
package fsync
