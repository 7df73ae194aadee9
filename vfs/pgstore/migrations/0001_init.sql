-- 1: the bucket catalog, the key-value rows and the pgvector mirror of
-- embeddings. See doc.go for the layout.

CREATE EXTENSION IF NOT EXISTS vector;

-- One row per bucket. parent 0 is the top level; seq is the bucket's
-- sequence (a uint64 stored in its bits).
CREATE TABLE ctxd_buckets (
	id     bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	parent bigint NOT NULL,
	name   bytea  NOT NULL,
	seq    bigint NOT NULL DEFAULT 0
);
-- Names are unique per parent; hashed so a name of any length fits a
-- B-tree entry.
CREATE UNIQUE INDEX ctxd_buckets_name ON ctxd_buckets (parent, sha256(name));

-- One row per key. A NULL value marks a nested bucket named key (its
-- catalog row has parent = bucket). A B-tree entry holds at most ~2.7 kB,
-- less than the longest key (32 kB), so the index orders by the key's
-- first 1,024 bytes (head) and tells longer keys apart by their hash
-- (tail); queries order by (head, key), which is key order.
CREATE TABLE ctxd_kv (
	bucket bigint NOT NULL,
	key    bytea  NOT NULL,
	value  bytea,
	head   bytea  NOT NULL GENERATED ALWAYS AS (substring(key FROM 1 FOR 1024)) STORED,
	tail   bytea  NOT NULL GENERATED ALWAYS AS (
		CASE WHEN octet_length(key) > 1024 THEN sha256(key) ELSE '\x'::bytea END) STORED,
	PRIMARY KEY (bucket, head, tail)
);

-- Embeddings usable from SQL (pgvector); the item store may mirror its
-- vectors here.
CREATE TABLE ctxd_vectors (
	model      text    NOT NULL,
	chunk_hash bytea   NOT NULL,
	embedding  halfvec NOT NULL,
	PRIMARY KEY (model, chunk_hash)
);
