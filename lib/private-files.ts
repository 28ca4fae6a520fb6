import fs from "node:fs";
import path from "node:path";

// Everything the service writes under DATA_DIR (the embedded database and its WAL, which hold key
// and password hashes, images, secrets) is readable by its own user only: files 0600, folders 0700.

export const PRIVATE_FILE_MODE = 0o600;
export const PRIVATE_DIR_MODE = 0o700;

/**
 * From now on, files and folders this process creates are its user's only (the embedded database
 * creates its files itself, with the default modes less the umask), and everything already under
 * `dataDir` is brought to those modes (a folder written by an older version, or by hand).
 */
export function makeDataDirPrivate(dataDir: string): void {
  process.umask(0o077);
  if (!fs.existsSync(dataDir)) return;
  const stack = [dataDir];
  while (stack.length > 0) {
    const dir = stack.pop()!;
    chmodIfLoose(dir, PRIVATE_DIR_MODE);
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) stack.push(full);
      else if (entry.isFile()) chmodIfLoose(full, PRIVATE_FILE_MODE);
    }
  }
}

function chmodIfLoose(file: string, mode: number): void {
  try {
    if ((fs.statSync(file).mode & 0o777) !== mode) fs.chmodSync(file, mode);
  } catch (error) {
    // Removed meanwhile (a session folder emptied by a deletion): nothing to protect.
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
  }
}
