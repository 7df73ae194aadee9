package tokenize

import "unicode"

// Exception tables: where the reference's character data differs from Go's
// (unicode.Version and norm.Version 15.0.0). The reference mixes Unicode
// versions: its Cf, Mn and P* tables (the unicode_categories crate) are
// older than Unicode 11, its NFD tables (unicode-normalization-alignments)
// predate Unicode 13, and its lowercase mapping (Rust's standard library) is
// Unicode 16. Only assigned characters whose classes changed appear here.
//
// Derived by running every code point through the `tokenizers` 0.23.3
// Python package's BertNormalizer pieces and BertPreTokenizer, and diffing
// with Go's tables; TestUnicodeClasses_Reference re-checks with -refdump
// (see testdata/refdump.py).

// refNoDecompose lists characters the reference's NFD leaves whole.
var refNoDecompose = []rune{0x11938}

var (
	// refNotControl: Cc/Cf/Co/Cs in Go's tables that clean_text keeps.
	refNotControl = &unicode.RangeTable{
		R16: []unicode.Range16{
			{Lo: 0x0890, Hi: 0x0891, Stride: 1},
			{Lo: 0x08E2, Hi: 0x08E2, Stride: 1},
		},
		R32: []unicode.Range32{
			{Lo: 0x110CD, Hi: 0x110CD, Stride: 1},
			{Lo: 0x13430, Hi: 0x1343F, Stride: 1},
		},
	}
	// refNotMn: Mn in Go's tables that strip_accents keeps.
	refNotMn = &unicode.RangeTable{
		R16: []unicode.Range16{
			{Lo: 0x07FD, Hi: 0x07FD, Stride: 1},
			{Lo: 0x0898, Hi: 0x089F, Stride: 1},
			{Lo: 0x08CA, Hi: 0x08E1, Stride: 1},
			{Lo: 0x09FE, Hi: 0x09FE, Stride: 1},
			{Lo: 0x0AFA, Hi: 0x0AFF, Stride: 1},
			{Lo: 0x0B55, Hi: 0x0B55, Stride: 1},
			{Lo: 0x0C04, Hi: 0x0C04, Stride: 1},
			{Lo: 0x0C3C, Hi: 0x0C3C, Stride: 1},
			{Lo: 0x0D00, Hi: 0x0D00, Stride: 1},
			{Lo: 0x0D3B, Hi: 0x0D3C, Stride: 1},
			{Lo: 0x0D81, Hi: 0x0D81, Stride: 1},
			{Lo: 0x0EBA, Hi: 0x0EBA, Stride: 1},
			{Lo: 0x0ECE, Hi: 0x0ECE, Stride: 1},
			{Lo: 0x180F, Hi: 0x180F, Stride: 1},
			{Lo: 0x1885, Hi: 0x1886, Stride: 1},
			{Lo: 0x1ABF, Hi: 0x1ACE, Stride: 1},
			{Lo: 0x1DF6, Hi: 0x1DFB, Stride: 1},
			{Lo: 0xA82C, Hi: 0xA82C, Stride: 1},
			{Lo: 0xA8C5, Hi: 0xA8C5, Stride: 1},
			{Lo: 0xA8FF, Hi: 0xA8FF, Stride: 1},
			{Lo: 0xA9BD, Hi: 0xA9BD, Stride: 1},
		},
		R32: []unicode.Range32{
			{Lo: 0x10D24, Hi: 0x10D27, Stride: 1},
			{Lo: 0x10EAB, Hi: 0x10EAC, Stride: 1},
			{Lo: 0x10EFD, Hi: 0x10EFF, Stride: 1},
			{Lo: 0x10F46, Hi: 0x10F50, Stride: 1},
			{Lo: 0x10F82, Hi: 0x10F85, Stride: 1},
			{Lo: 0x11070, Hi: 0x11070, Stride: 1},
			{Lo: 0x11073, Hi: 0x11074, Stride: 1},
			{Lo: 0x110C2, Hi: 0x110C2, Stride: 1},
			{Lo: 0x111C9, Hi: 0x111C9, Stride: 1},
			{Lo: 0x111CF, Hi: 0x111CF, Stride: 1},
			{Lo: 0x1123E, Hi: 0x1123E, Stride: 1},
			{Lo: 0x11241, Hi: 0x11241, Stride: 1},
			{Lo: 0x1133B, Hi: 0x1133B, Stride: 1},
			{Lo: 0x11438, Hi: 0x1143F, Stride: 1},
			{Lo: 0x11442, Hi: 0x11444, Stride: 1},
			{Lo: 0x11446, Hi: 0x11446, Stride: 1},
			{Lo: 0x1145E, Hi: 0x1145E, Stride: 1},
			{Lo: 0x1182F, Hi: 0x11837, Stride: 1},
			{Lo: 0x11839, Hi: 0x1183A, Stride: 1},
			{Lo: 0x1193B, Hi: 0x1193C, Stride: 1},
			{Lo: 0x1193E, Hi: 0x1193E, Stride: 1},
			{Lo: 0x11943, Hi: 0x11943, Stride: 1},
			{Lo: 0x119D4, Hi: 0x119D7, Stride: 1},
			{Lo: 0x119DA, Hi: 0x119DB, Stride: 1},
			{Lo: 0x119E0, Hi: 0x119E0, Stride: 1},
			{Lo: 0x11A01, Hi: 0x11A0A, Stride: 1},
			{Lo: 0x11A33, Hi: 0x11A38, Stride: 1},
			{Lo: 0x11A3B, Hi: 0x11A3E, Stride: 1},
			{Lo: 0x11A47, Hi: 0x11A47, Stride: 1},
			{Lo: 0x11A51, Hi: 0x11A56, Stride: 1},
			{Lo: 0x11A59, Hi: 0x11A5B, Stride: 1},
			{Lo: 0x11A8A, Hi: 0x11A96, Stride: 1},
			{Lo: 0x11A98, Hi: 0x11A99, Stride: 1},
			{Lo: 0x11C30, Hi: 0x11C36, Stride: 1},
			{Lo: 0x11C38, Hi: 0x11C3D, Stride: 1},
			{Lo: 0x11C3F, Hi: 0x11C3F, Stride: 1},
			{Lo: 0x11C92, Hi: 0x11CA7, Stride: 1},
			{Lo: 0x11CAA, Hi: 0x11CB0, Stride: 1},
			{Lo: 0x11CB2, Hi: 0x11CB3, Stride: 1},
			{Lo: 0x11CB5, Hi: 0x11CB6, Stride: 1},
			{Lo: 0x11D31, Hi: 0x11D36, Stride: 1},
			{Lo: 0x11D3A, Hi: 0x11D3A, Stride: 1},
			{Lo: 0x11D3C, Hi: 0x11D3D, Stride: 1},
			{Lo: 0x11D3F, Hi: 0x11D45, Stride: 1},
			{Lo: 0x11D47, Hi: 0x11D47, Stride: 1},
			{Lo: 0x11D90, Hi: 0x11D91, Stride: 1},
			{Lo: 0x11D95, Hi: 0x11D95, Stride: 1},
			{Lo: 0x11D97, Hi: 0x11D97, Stride: 1},
			{Lo: 0x11EF3, Hi: 0x11EF4, Stride: 1},
			{Lo: 0x11F00, Hi: 0x11F01, Stride: 1},
			{Lo: 0x11F36, Hi: 0x11F3A, Stride: 1},
			{Lo: 0x11F40, Hi: 0x11F40, Stride: 1},
			{Lo: 0x11F42, Hi: 0x11F42, Stride: 1},
			{Lo: 0x13440, Hi: 0x13440, Stride: 1},
			{Lo: 0x13447, Hi: 0x13455, Stride: 1},
			{Lo: 0x16F4F, Hi: 0x16F4F, Stride: 1},
			{Lo: 0x16FE4, Hi: 0x16FE4, Stride: 1},
			{Lo: 0x1CF00, Hi: 0x1CF2D, Stride: 1},
			{Lo: 0x1CF30, Hi: 0x1CF46, Stride: 1},
			{Lo: 0x1E000, Hi: 0x1E006, Stride: 1},
			{Lo: 0x1E008, Hi: 0x1E018, Stride: 1},
			{Lo: 0x1E01B, Hi: 0x1E021, Stride: 1},
			{Lo: 0x1E023, Hi: 0x1E024, Stride: 1},
			{Lo: 0x1E026, Hi: 0x1E02A, Stride: 1},
			{Lo: 0x1E08F, Hi: 0x1E08F, Stride: 1},
			{Lo: 0x1E130, Hi: 0x1E136, Stride: 1},
			{Lo: 0x1E2AE, Hi: 0x1E2AE, Stride: 1},
			{Lo: 0x1E2EC, Hi: 0x1E2EF, Stride: 1},
			{Lo: 0x1E4EC, Hi: 0x1E4EF, Stride: 1},
			{Lo: 0x1E944, Hi: 0x1E94A, Stride: 1},
		},
	}
	// refMn: not Mn in Go's tables but dropped by strip_accents.
	refMn = &unicode.RangeTable{
		R16: []unicode.Range16{
			{Lo: 0x1734, Hi: 0x1734, Stride: 1},
		},
	}
	// refNotPunct: P* in Go's tables that the pre-tokenizer does not split off.
	refNotPunct = &unicode.RangeTable{
		R16: []unicode.Range16{
			{Lo: 0x061D, Hi: 0x061D, Stride: 1},
			{Lo: 0x09FD, Hi: 0x09FD, Stride: 1},
			{Lo: 0x0A76, Hi: 0x0A76, Stride: 1},
			{Lo: 0x0C77, Hi: 0x0C77, Stride: 1},
			{Lo: 0x0C84, Hi: 0x0C84, Stride: 1},
			{Lo: 0x1B7D, Hi: 0x1B7E, Stride: 1},
			{Lo: 0x2E43, Hi: 0x2E4F, Stride: 1},
			{Lo: 0x2E52, Hi: 0x2E5D, Stride: 1},
		},
		R32: []unicode.Range32{
			{Lo: 0x10EAD, Hi: 0x10EAD, Stride: 1},
			{Lo: 0x10F55, Hi: 0x10F59, Stride: 1},
			{Lo: 0x10F86, Hi: 0x10F89, Stride: 1},
			{Lo: 0x1144B, Hi: 0x1144F, Stride: 1},
			{Lo: 0x1145A, Hi: 0x1145B, Stride: 1},
			{Lo: 0x1145D, Hi: 0x1145D, Stride: 1},
			{Lo: 0x11660, Hi: 0x1166C, Stride: 1},
			{Lo: 0x116B9, Hi: 0x116B9, Stride: 1},
			{Lo: 0x1183B, Hi: 0x1183B, Stride: 1},
			{Lo: 0x11944, Hi: 0x11946, Stride: 1},
			{Lo: 0x119E2, Hi: 0x119E2, Stride: 1},
			{Lo: 0x11A3F, Hi: 0x11A46, Stride: 1},
			{Lo: 0x11A9A, Hi: 0x11A9C, Stride: 1},
			{Lo: 0x11A9E, Hi: 0x11AA2, Stride: 1},
			{Lo: 0x11B00, Hi: 0x11B09, Stride: 1},
			{Lo: 0x11C41, Hi: 0x11C45, Stride: 1},
			{Lo: 0x11C70, Hi: 0x11C71, Stride: 1},
			{Lo: 0x11EF7, Hi: 0x11EF8, Stride: 1},
			{Lo: 0x11F43, Hi: 0x11F4F, Stride: 1},
			{Lo: 0x11FFF, Hi: 0x11FFF, Stride: 1},
			{Lo: 0x12FF1, Hi: 0x12FF2, Stride: 1},
			{Lo: 0x16E97, Hi: 0x16E9A, Stride: 1},
			{Lo: 0x16FE2, Hi: 0x16FE2, Stride: 1},
			{Lo: 0x1E95E, Hi: 0x1E95F, Stride: 1},
		},
	}
	// refPunct: not P* in Go's tables but split off by the pre-tokenizer.
	refPunct = &unicode.RangeTable{
		R16: []unicode.Range16{
			{Lo: 0x166D, Hi: 0x166D, Stride: 1},
		},
		R32: []unicode.Range32{
			{Lo: 0x111C9, Hi: 0x111C9, Stride: 1},
		},
	}
	// refLower: lowercase mappings the reference has and Go's tables lack.
	refLower = map[rune]rune{
		0x1C89:  0x1C8A,
		0xA7CB:  0x0264,
		0xA7CC:  0xA7CD,
		0xA7CE:  0xA7CF,
		0xA7D2:  0xA7D3,
		0xA7D4:  0xA7D5,
		0xA7DA:  0xA7DB,
		0xA7DC:  0x019B,
		0x10D50: 0x10D70,
		0x10D51: 0x10D71,
		0x10D52: 0x10D72,
		0x10D53: 0x10D73,
		0x10D54: 0x10D74,
		0x10D55: 0x10D75,
		0x10D56: 0x10D76,
		0x10D57: 0x10D77,
		0x10D58: 0x10D78,
		0x10D59: 0x10D79,
		0x10D5A: 0x10D7A,
		0x10D5B: 0x10D7B,
		0x10D5C: 0x10D7C,
		0x10D5D: 0x10D7D,
		0x10D5E: 0x10D7E,
		0x10D5F: 0x10D7F,
		0x10D60: 0x10D80,
		0x10D61: 0x10D81,
		0x10D62: 0x10D82,
		0x10D63: 0x10D83,
		0x10D64: 0x10D84,
		0x10D65: 0x10D85,
		0x16EA0: 0x16EBB,
		0x16EA1: 0x16EBC,
		0x16EA2: 0x16EBD,
		0x16EA3: 0x16EBE,
		0x16EA4: 0x16EBF,
		0x16EA5: 0x16EC0,
		0x16EA6: 0x16EC1,
		0x16EA7: 0x16EC2,
		0x16EA8: 0x16EC3,
		0x16EA9: 0x16EC4,
		0x16EAA: 0x16EC5,
		0x16EAB: 0x16EC6,
		0x16EAC: 0x16EC7,
		0x16EAD: 0x16EC8,
		0x16EAE: 0x16EC9,
		0x16EAF: 0x16ECA,
		0x16EB0: 0x16ECB,
		0x16EB1: 0x16ECC,
		0x16EB2: 0x16ECD,
		0x16EB3: 0x16ECE,
		0x16EB4: 0x16ECF,
		0x16EB5: 0x16ED0,
		0x16EB6: 0x16ED1,
		0x16EB7: 0x16ED2,
		0x16EB8: 0x16ED3,
	}
)
