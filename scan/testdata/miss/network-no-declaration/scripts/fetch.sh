#!/bin/sh
# see https://api.weather.gov/
curl -s http://127.0.0.1:9000/health
