package vfs

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strings"
)

const (
	defaultTreeDepth  = 3
	defaultTreePerDir = 50
	// checkEvery is how many keys a walk visits between checks of its
	// context: well under a millisecond of work.
	checkEvery = 4096
)

// Tree returns the directory tree under dir, at most maxDepth levels deep (0
// means 3) and perDir children per directory (0 means 50). A dir with neither
// Drive nor ID is the all-drives root, with one child per drive. The walk
// reads every key below dir (directory sizes need them) and stops with
// ctx's error once ctx ends.
func (s *Store) Tree(ctx context.Context, dir Ref, maxDepth, perDir int) (*TreeNode, error) {
	if maxDepth < 0 || perDir < 0 {
		return nil, newError(ErrInvalid, dir.String(), "pass 0 for the defaults (depth 3, 50 per directory)",
			"Tree depth %d and per-directory limit %d must not be negative.", maxDepth, perDir)
	}
	if maxDepth == 0 {
		maxDepth = defaultTreeDepth
	}
	if perDir == 0 {
		perDir = defaultTreePerDir
	}
	var root *TreeNode
	err := s.view(ctx, func(t *txn) error {
		if dir.Drive == "" && dir.ID == "" {
			root = &TreeNode{IsDir: true}
			for _, d := range t.visibleDrives() {
				n := &TreeNode{Name: d.Name, Drive: d.Name, Path: "/", IsDir: true}
				if maxDepth > 1 {
					var err error
					if n, err = t.buildTree(ctx, d.Name, "/", maxDepth-1, perDir); err != nil {
						return err
					}
				} else {
					n.DepthTruncated = true
				}
				n.Name, n.Size = d.Name, d.Size
				root.Size += d.Size
				root.Children = append(root.Children, n)
			}
			trimTree(root, perDir)
			return nil
		}
		n, err := t.lookupDir(dir)
		if err != nil {
			return err
		}
		if root, err = t.buildTree(ctx, n.drive, n.path, maxDepth, perDir); err != nil {
			return err
		}
		trimTree(root, perDir)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return root, nil
}

// buildTree builds the tree below dir in one scan of its (visible) key
// range, reading only the paths bucket. Keys arrive in depth-first order, so the nodes of the
// current key's ancestors form a stack. Directories sort before items, so an
// item past the first perDir items of its directory can never be shown: it is
// counted as omitted without allocating a node (this keeps Write's directory
// snapshot cheap in large directories).
func (t *txn) buildTree(ctx context.Context, drive, dir string, maxDepth, perDir int) (*TreeNode, error) {
	root := &TreeNode{Name: baseName(dir), Drive: drive, Path: dir, IsDir: true}
	if dir == "/" {
		root.Name = drive
	}
	prefix := dirPrefix(dir)
	stack := []*TreeNode{root}
	stackKeys := [][]byte{nil}
	add := func(k, v []byte) {
		size := sizeOf(v)
		root.Size += size
		pos := len(prefix)
		for depth := 1; ; depth++ {
			if depth > maxDepth {
				stack[depth-1].DepthTruncated = true
				return
			}
			end := segmentEnd(k, pos)
			last := end == len(k)
			var n *TreeNode
			if depth < len(stack) && bytes.Equal(stackKeys[depth], k[:end]) {
				n = stack[depth]
			} else {
				parent := stack[depth-1]
				if last && v[0]&flagDir == 0 {
					if parent.shownItems >= perDir {
						parent.OmittedChildren++
						return
					}
					parent.shownItems++
				}
				p := keyPath(k[:end])
				n = &TreeNode{Name: baseName(p), Drive: drive, Path: p, IsDir: !last}
				stack, stackKeys = stack[:depth], stackKeys[:depth]
				stack[depth-1].Children = append(stack[depth-1].Children, n)
				stack, stackKeys = append(stack, n), append(stackKeys, bytes.Clone(k[:end]))
			}
			if last {
				if v[0]&flagDir != 0 {
					n.IsDir, n.MimeType = true, DirMimeType
				} else {
					n.Size, n.MimeType = size, string(v[25:])
				}
				return
			}
			n.IsDir = true
			n.Size += size
			pos = end + 1
		}
	}
	seen := 0
	var err error
	t.walkVisible(t.driveBucket(drive), drive, dir, nil, func(k, v []byte) bool {
		if seen++; seen%checkEvery == 0 && ctx.Err() != nil {
			err = ctx.Err()
			return false
		}
		add(k, v)
		return true
	})
	if err != nil {
		return nil, err
	}
	return root, nil
}

// trimTree orders children (directories first, then by name) and keeps perDir.
func trimTree(n *TreeNode, perDir int) {
	slices.SortFunc(n.Children, func(a, b *TreeNode) int {
		if a.IsDir != b.IsDir {
			if a.IsDir {
				return -1
			}
			return 1
		}
		return strings.Compare(a.Name, b.Name)
	})
	if len(n.Children) > perDir {
		n.OmittedChildren += len(n.Children) - perDir
		n.Children = n.Children[:perDir:perDir]
	}
	for _, c := range n.Children {
		trimTree(c, perDir)
	}
}

// RenderTree renders n as indented text: "/" after directories, sizes,
// "… N more" for omitted children and "…" after directories cut by depth.
func RenderTree(n *TreeNode) string {
	var sb strings.Builder
	if n.Drive == "" {
		fmt.Fprintf(&sb, "(all drives) %s\n", formatSize(n.Size))
	} else {
		fmt.Fprintf(&sb, "%s%s\n", n.Ref(), nodeSuffix(n))
	}
	renderChildren(&sb, n, "")
	return sb.String()
}

func renderChildren(sb *strings.Builder, n *TreeNode, indent string) {
	for i, c := range n.Children {
		last := i == len(n.Children)-1 && n.OmittedChildren == 0
		branch, next := "├── ", "│   "
		if last {
			branch, next = "└── ", "    "
		}
		name := c.Name
		if c.Drive != "" && c.Path == "/" {
			name = c.Drive + ":"
		}
		if c.IsDir {
			name += "/"
		}
		fmt.Fprintf(sb, "%s%s%s%s\n", indent, branch, name, nodeSuffix(c))
		renderChildren(sb, c, indent+next)
	}
	if n.OmittedChildren > 0 {
		fmt.Fprintf(sb, "%s└── … %d more\n", indent, n.OmittedChildren)
	}
}

func nodeSuffix(n *TreeNode) string {
	s := " (" + formatSize(n.Size) + ")"
	if n.DepthTruncated {
		s += " …"
	}
	return s
}

// formatSize renders a byte count with binary units.
func formatSize(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit && exp < 4; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTP"[exp])
}
