// Types of the ES module entry point (index.mjs): the same declarations as
// the CommonJS entry point's, and the module namespace as the default export.
export * from './index.js'
import * as pkg from './index.js'
export default pkg
