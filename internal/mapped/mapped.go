package mapped

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// RSS is the resident bytes of this process's mappings of file, a path as
// the kernel prints it (absolute, symlinks resolved).
func RSS(file string) (int64, error) {
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		return 0, err
	}
	defer f.Close()
	var total int64
	in := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		switch {
		case len(fields) >= 5 && strings.Contains(fields[0], "-") && !strings.HasSuffix(fields[0], ":"):
			// A mapping's header: address range, perms, offset, device, inode, path.
			in = len(fields) >= 6 && fields[5] == file
		case in && len(fields) == 3 && fields[0] == "Rss:":
			kb, err := strconv.ParseInt(fields[1], 10, 64)
			if err != nil {
				return 0, fmt.Errorf("smaps: %q: %w", sc.Text(), err)
			}
			total += kb << 10
		}
	}
	return total, sc.Err()
}
