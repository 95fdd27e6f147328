// The same spec files run under Vitest (vitest.config.mjs). ES module specs need
// Node's --experimental-vm-modules, which the test:jest script passes.
/** @type {import('jest').Config} */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/__test__'],
  testMatch: ['<rootDir>/__test__/**/*.spec.{cjs,mjs}'],
  testPathIgnorePatterns: ['/node_modules/', '<rootDir>/__test__/fixtures/'],
  moduleFileExtensions: ['js', 'cjs', 'mjs', 'json', 'node'],
  transform: {},
  testTimeout: 10_000,
}
