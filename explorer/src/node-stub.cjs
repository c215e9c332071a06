// Stands in for Node's built-in modules in the browser bundle. The explorer passes its own
// MIP backends, so the library's Node-only paths (worker threads, files, core counts) never run.
module.exports = {};
