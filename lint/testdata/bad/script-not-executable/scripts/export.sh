#!/bin/sh
echo export
