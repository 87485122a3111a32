#!/usr/bin/env node
import { main } from "../dist/bench/ccjtune.js"; await main(process.argv.slice(2));
