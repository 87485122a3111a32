#!/usr/bin/env node
import { main } from "../dist/bench/ccjbench.js"; await main(process.argv.slice(2));
