// Keep vite's and vitest's cache inside the project: node_modules is a
// symlink to the horizon checkout's.
export default { cacheDir: ".vite-cache" };
