// Lane 1 of 2 of the browser test files (tests/browser/group.mjs).
import { runGroupOf } from '../group.mjs';

runGroupOf(import.meta.url);
