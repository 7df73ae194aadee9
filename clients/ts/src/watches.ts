/**
 * The watch helpers of CtxdClient, over WatchService: directory trees on the
 * daemon's host kept in step with their items for as long as the watch
 * exists, across daemon restarts.
 */
import * as path from "node:path";

import type { Client } from "@connectrpc/connect";

import type { AddWatchResponse, Watch, WatchService } from "./gen/ctxd/v1/watch_pb.js";

/** Options of addWatch. */
export interface AddWatchOptions {
  /** The drive its items go to; default disk. */
  drive?: string;
  /** gitignore-style patterns left out beside the tree's .gitignore files; at most limits.max_watch_excludes (64). */
  exclude?: string[];
  /** Include hidden files and directories. */
  includeHidden?: boolean;
  /** Tags every item of the tree carries. */
  tags?: string[];
  /** How long a file's events coalesce, in milliseconds (0 to 60000; default 200). */
  debounceMs?: number;
  /** Delete the item of a vanished file instead of keeping it and reporting it missing. */
  deleteMissing?: boolean;
  /** Deadline of this call in milliseconds; by default the client's. A caller that leaves leaves the watch in place. */
  timeoutMs?: number;
}

/** The watch helpers of CtxdClient. */
export interface WatchMethods {
  /**
   * Watches the directory `dir` (resolved against process.cwd()) on the
   * daemon's host: ingests it and keeps its items in step from now on, also
   * across daemon restarts. Resolves once the tree is ingested and
   * searchable; a directory already watched resolves to its watch with
   * `existed` set.
   */
  addWatch(dir: string, options?: AddWatchOptions): Promise<AddWatchResponse>;
  /** The watches, by path, each with its status (mode, files, last event and reconcile, lag, errors). */
  listWatches(): Promise<Watch[]>;
  /**
   * Stops the watch with this id, or of this directory (a path with a
   * slash is resolved against process.cwd()); its items are kept. Resolves
   * to the watch as it was.
   */
  removeWatch(idOrDir: string): Promise<Watch | undefined>;
}

export function watchMethods(watches: Client<typeof WatchService>): WatchMethods {
  return {
    addWatch: (dir, o = {}) =>
      watches.addWatch(
        {
          path: path.resolve(dir),
          drive: o.drive,
          exclude: o.exclude,
          includeHidden: o.includeHidden,
          tags: o.tags,
          debounceMs: BigInt(o.debounceMs ?? 0),
          deleteMissing: o.deleteMissing,
        },
        { timeoutMs: o.timeoutMs },
      ),
    listWatches: async () => (await watches.listWatches({})).watches,
    removeWatch: async (idOrDir) =>
      (await watches.removeWatch({ watch: idOrDir.includes(path.sep) ? path.resolve(idOrDir) : idOrDir })).watch,
  };
}
