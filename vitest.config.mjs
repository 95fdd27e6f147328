import { defineConfig } from 'vitest/config'

// The same spec files run under Jest (jest.config.cjs): CommonJS specs using
// the runner globals, plus one ES module spec.
export default defineConfig({
  test: {
    globals: true,
    include: ['__test__/**/*.spec.{cjs,mjs}'],
    exclude: ['**/node_modules/**', '__test__/fixtures/**'],
    testTimeout: 10_000,
  },
})
