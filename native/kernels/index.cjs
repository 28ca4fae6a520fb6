// The compiled addon (node-gyp rebuild, run by npm install): see kernels.c.
module.exports = require("./build/Release/kernels.node");
