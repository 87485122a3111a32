#!/usr/bin/env node
import "../dist/src/cli/ccjrun.js";
